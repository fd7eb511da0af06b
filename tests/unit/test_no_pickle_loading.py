"""Nothing in the package loads a pickle, but the one-time converter of old rescorer.pkl files
(sites/convert_rescorer.py, run by hand on files one wrote): a pickle runs code when loaded, and
every file errorseq reads may come from someone else (sites.transfer, model.pt, checkpoints)."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workflow_scripts"
CONVERTER = "sites/convert_rescorer.py"
UNPICKLING = re.compile(
    r"\bpickle\.loads?\(|\bUnpickler\b|\bjoblib\.load\(|\b(dill|cloudpickle|marshal|shelve)\.(loads?|open)\(|"
    r"read_pickle\(|allow_pickle\s*=\s*True"
)
TORCH_LOAD = re.compile(r"(?<![\w.])torch\.load\(")  # not safetensors.torch.load: no pickle


def call_text(source: str, start: int) -> str:
    """The text of the call whose opening parenthesis ends at `start`, to its closing one."""
    depth = 1
    for index in range(start, len(source)):
        depth += {"(": 1, ")": -1}.get(source[index], 0)
        if depth == 0:
            return source[start:index]
    return source[start:]


def unpickling_lines(path: Path) -> list[str]:
    source = path.read_text()
    found = [match.start() for match in UNPICKLING.finditer(source)]
    found += [
        match.start()
        for match in TORCH_LOAD.finditer(source)
        if not re.search(r"weights_only\s*=\s*True", call_text(source, match.end()))
    ]
    name = path.relative_to(PACKAGE)
    return [f"{name}:{source.count(chr(10), 0, at) + 1}" for at in sorted(found)]


def test_only_the_converter_unpickles():
    offenders = [line for path in sorted(PACKAGE.rglob("*.py")) for line in unpickling_lines(path)]
    assert offenders and all(line.startswith(CONVERTER) for line in offenders), offenders


def test_the_check_finds_each_way_of_unpickling(tmp_path):
    """The patterns catch what they are for, and a torch.load with weights_only=True passes."""
    cases = {
        "pickle.loads(data)": 1,
        "pickle.load(handle)": 1,
        "class U(pickle.Unpickler): pass": 1,
        "joblib.load(path)": 1,
        "np.load(path, allow_pickle=True)": 1,
        "torch.load(path)": 1,
        "torch.load(path, map_location='cpu', weights_only=False)": 1,
        "torch.load(\n    path,\n    weights_only=True,\n)": 0,
        "np.load(path, allow_pickle=False)": 0,
        "safetensors.torch.load(data)": 0,
    }
    for number, (code, expected) in enumerate(cases.items()):
        module = tmp_path / f"case{number}.py"
        module.write_text(code + "\n")
        source = module.read_text()
        hits = len(UNPICKLING.findall(source)) + sum(
            not re.search(r"weights_only\s*=\s*True", call_text(source, m.end()))
            for m in TORCH_LOAD.finditer(source)
        )
        assert hits == expected, code
