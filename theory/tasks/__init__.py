"""Built-in tasks: registered in the catalogue under kind ``task`` (filled in by theory.tasks modules)."""
