"""Model stages, one module each, each a small class with a batch method (see DESIGN.md)."""
