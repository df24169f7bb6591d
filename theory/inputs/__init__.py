"""The input wing: reading masks, tasks, families, stacks and mask_mods from text, files and objects."""
