"""The Hub Space of the paraphrase_quality evaluate module: evaluate's own widget over it."""

from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).with_name("paraphrase_quality.py")))
launch_gradio_widget(module)
