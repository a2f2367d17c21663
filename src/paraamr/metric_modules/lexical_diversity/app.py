"""The Hub Space of the lexical_diversity evaluate module: evaluate's own widget over it."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("lexical_diversity.py")))
launch_gradio_widget(module)
