from paraamr.cli import entry  # accelerate launch generate.py ... (paraamr generate, see --help)

entry("generate")
