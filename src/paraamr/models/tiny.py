"""Tiny random-weight models in the real formats (an amrlib parser and realizer, a GPT-2), for tests.

They memorize the examples the tests need: :data:`PAPER_TEXT` parses to :data:`PAPER_AMR`,
:data:`GARBLED_TEXT` to no graph, and :data:`PAPER_AMR` realizes to :data:`PAPER_TEXT`.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import shutil
import tempfile
from pathlib import Path

from paraamr.atomic import atomic_dir

#: Figure 1 of the ParaAMR paper (Huang et al., 2023).
PAPER_TEXT = "I know for them to approve this price, they'll need statistical documentation."
PAPER_AMR = (
    "(z1 / know :ARG0 (z2 / i) :ARG1 (z3 / need :ARG0 (z4 / they) :ARG1 (z5 / documentation "
    ":mod (z6 / statistic)) :purpose (z7 / approve :ARG0 z4 :ARG1 (z8 / thing :ARG2-of "
    "(z9 / price) :mod (z10 / this)))))"
)
#: A sentence the tiny parser maps to a serialization that does not deserialize (no graph).
GARBLED_TEXT = "colorless green ideas sleep furiously"

#: Parser input/output limits (tokens) written in the tiny models' ``task_specific_params``.
MAX_IN_LEN = 48
MAX_OUT_LEN = 64
#: Context size of the tiny GPT-2.
LM_POSITIONS = 64

_WORDS = (
    "the a an of to and in is was he she it we you they them i me my this that these those for "
    "on with as at by from be have has had do does did not no will would can could should need "
    "know approve price documentation statistical statistic boy girl want go went see saw like "
    "book house dog cat man woman city year day time thing person people good new old big small "
    "say said make made take took come came give gave think thought tell told work run ran eat . , ?"
)
_AMR_TOKENS = (
    "( ) / :ARG0 :ARG1 :ARG2 :ARG3 :ARG4 :ARG0-of :ARG1-of :ARG2-of :mod :domain :purpose :time "
    ":location :manner :polarity :quant :name :op1 :op2 :op3 - and or person thing name "
    "want-01 go-01 see-01 know-01 need-01 approve-01 say-01 think-01 possible-01 this that"
)


def _tokenizer(texts: list[str], template: str, **special: str):
    """A word-level tokenizer over ``texts``; ids 0, 1, ... for the ``special`` tokens, then ``<unk>``."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    special["unk_token"] = "<unk>"
    specials = list(dict.fromkeys(special.values()))
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    words = sorted(set(" ".join(texts).split()))
    tok.train_from_iterator(words, trainers.WordLevelTrainer(special_tokens=specials))
    if template:
        used = [t for t in specials if t in template.split()]
        tok.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=[(t, tok.token_to_id(t)) for t in used]
        )
    return PreTrainedTokenizerFast(tokenizer_object=tok, clean_up_tokenization_spaces=False, **special)


def _memorize(model, tokenizer, pairs: list[tuple[str, str]], steps: int) -> None:
    """Train ``model`` on ``pairs`` (input, target) until it reproduces them."""
    import torch

    enc = tokenizer([a for a, _ in pairs], padding=True, return_tensors="pt")
    labels = tokenizer([b for _, b in pairs], padding=True, return_tensors="pt").input_ids
    labels[labels == tokenizer.pad_token_id] = -100
    opt = torch.optim.Adam(model.parameters(), lr=2e-2)
    model.train()
    for _ in range(steps):
        model(**enc, labels=labels).loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()


def _save(model, tokenizer, folder: Path, amrlib: tuple[str, str] | None = None) -> Path:
    """Save ``model`` and ``tokenizer`` into ``folder``, with an ``amrlib_meta.json`` when ``amrlib``
    gives its ``(model_type, inference_module)``."""
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    if amrlib is not None:
        meta = {
            "model_type": amrlib[0],
            "version": "0.0.1",
            "date": "2026-01-01",
            "inference_module": amrlib[1],
            "inference_class": "Inference",
            "model_fn": "model.safetensors",
            "base_model": "paraamr-tiny",
            "kwargs": {},
        }
        (folder / "amrlib_meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder


def _parser(folder: Path):
    from amrlib.models.parse_xfm.penman_serializer import PenmanSerializer
    from transformers import BartConfig, BartForConditionalGeneration

    serial = PenmanSerializer(PAPER_AMR).get_graph_string()
    corpus = [_WORDS, _AMR_TOKENS, PAPER_TEXT, serial, GARBLED_TEXT]
    tok = _tokenizer(corpus, "<s> $A </s>", bos_token="<s>", pad_token="<pad>", eos_token="</s>")
    task = {"model_name_or_path": "paraamr-tiny", "max_in_len": MAX_IN_LEN, "max_out_len": MAX_OUT_LEN}
    config = BartConfig(
        vocab_size=len(tok),
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=MAX_OUT_LEN + 8,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        forced_bos_token_id=0,
        task_specific_params={"parse_amr": task},
    )
    model = BartForConditionalGeneration(config)
    _memorize(model, tok, [(PAPER_TEXT, serial), (GARBLED_TEXT, "( ( ( :ARG0 :ARG1 ) ) :mod")], steps=60)
    return _save(model, tok, folder, ("stog", ".parse_xfm.inference"))


def _realizer(folder: Path):
    from amrlib.models.generate_xfm.model_input_helper import ModelInputHelper
    from transformers import T5Config, T5ForConditionalGeneration

    oneline = ModelInputHelper.gstring_to_oneline(PAPER_AMR)
    corpus = [_WORDS, _AMR_TOKENS, PAPER_TEXT, oneline]
    tok = _tokenizer(corpus, "$A </s>", pad_token="<pad>", eos_token="</s>")
    task = {"model_name_or_path": "paraamr-tiny", "max_in_len": MAX_OUT_LEN, "max_out_len": MAX_IN_LEN}
    config = T5Config(
        vocab_size=len(tok),
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        task_specific_params={"translation_amr_to_text": task},
    )
    model = T5ForConditionalGeneration(config)
    _memorize(model, tok, [(oneline, PAPER_TEXT)], steps=60)
    return _save(model, tok, folder, ("gtos", ".generate_xfm.inference"))


def _lm(folder: Path):
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _tokenizer([_WORDS, PAPER_TEXT], "", bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    config = GPT2Config(
        vocab_size=len(tok),
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=LM_POSITIONS,
        bos_token_id=0,
        eos_token_id=0,
    )
    return _save(GPT2LMHeadModel(config), tok, folder)


def make_tiny(folder: str | Path, *, seed: int = 0) -> dict[str, Path]:
    """Write tiny models under ``folder``, deterministic for ``seed``; return ``{"parser": dir,
    "realizer": dir, "lm": dir}``. Each is built in a temporary folder and the three are put in
    place together at the end (a run stopped before leaves none). Torch's RNG, thread count and
    progress bars are left as they were."""
    import torch
    from transformers.utils import logging as hf_logging

    folder = Path(folder)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with torch.random.fork_rng(devices=[]), contextlib.ExitStack() as stack:
            out = {}
            for name, build in (("parser", _parser), ("realizer", _realizer), ("lm", _lm)):
                torch.manual_seed(seed)
                build(stack.enter_context(atomic_dir(folder / name, replace=True)))
                out[name] = folder / name
    finally:
        torch.set_num_threads(threads)
        if bars:
            hf_logging.enable_progress_bar()
    return out


@functools.cache
def shared(seed: int = 0) -> dict[str, Path]:
    """:func:`make_tiny` into a temporary dir made once per process (removed at exit); for doctests."""
    folder = tempfile.mkdtemp(prefix="paraamr-tiny-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return make_tiny(folder, seed=seed)
