"""The views: pictures, text, tables, Graphviz dot and the JSON/status-line output of the commands."""
