from paraamr.generate import main  # accelerate launch generate.py ... (see --help)

raise SystemExit(main())
