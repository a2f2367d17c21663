from paraamr.generate import entry  # accelerate launch generate.py ... (see --help)

entry()
