"""``hasse audit``: transformers models, training scenarios, measured flow per layer, the report."""
