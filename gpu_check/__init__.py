"""gpu_check: the theory confirmed in real PyTorch attention layers (design.md §9).

The only package that imports torch, and only in its modules, not here, so that
``import gpu_check.mask_mod`` stays cheap. One concept per module:

- ``config``      the frozen :class:`~gpu_check.config.StackConfig`, device, precision, threads;
- ``model``       the stack of pre-norm Transformer blocks with seeded weights;
- ``backends``    masked attention behind one interface: manual, SDPA, FlexAttention
                  (eager, compiled), nn.MultiheadAttention (mask inverted explicitly);
- ``dependency``  the observed dependency pattern (batched VJPs, exact; or forward
                  perturbations, against the noise measured in the same run) against
                  R(L): unexpected, missing, cancelled;
- ``embedding``   a task's inputs as symbol + position embeddings;
- ``leak_gradients``  per supervised position, gradients w.r.t. inputs holding its target;
- ``check``       the check behind ``hasse gpu-check``: block i runs layer i of a stack (a single
                  mask is a stack of one layer) vs the stack's R(L), and a task's leak gradients;
- ``recurrence``  a recurrent layer run for real: a gated linear recurrence by a scan, exact resets;
- ``compare``     every backend beside the reference on values and gradients;
- ``train_demo``  clean vs leaky training on i.i.d. tokens, beside ln V;
- ``run_gpu``     the prepared device run (``python -m hasse.gpu_check.run_gpu OUT.json``);
- ``mask_mod``    torch evaluation of FlexAttention ``mask_mod`` files;
- ``torch_extra`` whether torch is installed, and the message naming the extra.
"""
