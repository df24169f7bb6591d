"""Which function evaluates each Z3 operation (by its kind); an operation not here is :class:`Unevaluable`."""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.evaluate.arithmetic import (
    _abs, _add, _and, _cmp, _distinct, _eq, _idiv, _implies, _ite, _mod, _mul, _not, _or, _power, _rem, _sub,
    _uminus, _xor,
)
from hasse.solvers.symbolic.evaluate.bitvectors import (
    _bv, _bv2int, _bv_cmp, _concat, _extract, _int2bv, _no_ovfl, _sbv2int, _sdiv, _shift, _sign_ext, _udiv,
    _wrapping, _zero_ext,
)
from hasse.solvers.symbolic.evaluate.lanes import _obj

_K = z3
_OPS = {
    _K.Z3_OP_AND: _and, _K.Z3_OP_OR: _or, _K.Z3_OP_NOT: _not, _K.Z3_OP_IMPLIES: _implies,
    _K.Z3_OP_XOR: _xor, _K.Z3_OP_ITE: _ite, _K.Z3_OP_EQ: _eq, _K.Z3_OP_IFF: _eq, _K.Z3_OP_DISTINCT: _distinct,
    _K.Z3_OP_LE: _cmp(lambda x, y: x <= y), _K.Z3_OP_LT: _cmp(lambda x, y: x < y),
    _K.Z3_OP_GE: _cmp(lambda x, y: x >= y), _K.Z3_OP_GT: _cmp(lambda x, y: x > y),
    _K.Z3_OP_ADD: _add, _K.Z3_OP_SUB: _sub, _K.Z3_OP_UMINUS: _uminus, _K.Z3_OP_MUL: _mul,
    _K.Z3_OP_IDIV: _idiv, _K.Z3_OP_MOD: _mod, _K.Z3_OP_REM: _rem, _K.Z3_OP_ABS: _abs, _K.Z3_OP_POWER: _power,
    _K.Z3_OP_BADD: _bv(_wrapping(lambda x, y: x + y)), _K.Z3_OP_BSUB: _bv(_wrapping(lambda x, y: x - y)),
    _K.Z3_OP_BMUL: _bv(_wrapping(lambda x, y: x * y)), _K.Z3_OP_BNEG: _bv(lambda w, x: -_obj(x)),
    _K.Z3_OP_BAND: _bv(_wrapping(lambda x, y: x & y)), _K.Z3_OP_BOR: _bv(_wrapping(lambda x, y: x | y)),
    _K.Z3_OP_BXOR: _bv(_wrapping(lambda x, y: x ^ y)), _K.Z3_OP_BNOT: _bv(lambda w, x: ~_obj(x)),
    _K.Z3_OP_BSHL: _bv(_shift("shl")), _K.Z3_OP_BLSHR: _bv(_shift("lshr")), _K.Z3_OP_BASHR: _bv(_shift("ashr")),
    _K.Z3_OP_BUDIV: _bv(_udiv("udiv")), _K.Z3_OP_BUREM: _bv(_udiv("urem")),
    _K.Z3_OP_BUDIV_I: _bv(_udiv("udiv")), _K.Z3_OP_BUREM_I: _bv(_udiv("urem")),
    _K.Z3_OP_BSDIV: _bv(_sdiv("sdiv")), _K.Z3_OP_BSREM: _bv(_sdiv("srem")), _K.Z3_OP_BSMOD: _bv(_sdiv("smod")),
    _K.Z3_OP_BSDIV_I: _bv(_sdiv("sdiv")), _K.Z3_OP_BSREM_I: _bv(_sdiv("srem")),
    _K.Z3_OP_BSMOD_I: _bv(_sdiv("smod")),
    _K.Z3_OP_SLEQ: _bv_cmp(lambda x, y: x <= y, True), _K.Z3_OP_SLT: _bv_cmp(lambda x, y: x < y, True),
    _K.Z3_OP_SGEQ: _bv_cmp(lambda x, y: x >= y, True), _K.Z3_OP_SGT: _bv_cmp(lambda x, y: x > y, True),
    _K.Z3_OP_ULEQ: _bv_cmp(lambda x, y: x <= y, False), _K.Z3_OP_ULT: _bv_cmp(lambda x, y: x < y, False),
    _K.Z3_OP_UGEQ: _bv_cmp(lambda x, y: x >= y, False), _K.Z3_OP_UGT: _bv_cmp(lambda x, y: x > y, False),
    _K.Z3_OP_EXTRACT: _extract, _K.Z3_OP_CONCAT: _concat, _K.Z3_OP_SIGN_EXT: _sign_ext,
    _K.Z3_OP_ZERO_EXT: _zero_ext, _K.Z3_OP_INT2BV: _int2bv, _K.Z3_OP_BV2INT: _bv2int,
    _K.Z3_OP_SBV2INT: _sbv2int,
    _K.Z3_OP_BSMUL_NO_OVFL: _no_ovfl("smul"), _K.Z3_OP_BSMUL_NO_UDFL: _no_ovfl("smul_udfl"),
    _K.Z3_OP_BUMUL_NO_OVFL: _no_ovfl("umul"),
}
