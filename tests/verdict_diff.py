"""Golden diff of the shipped models' verdicts and findings against another revision.

    python tests/verdict_diff.py [REV] [MODEL ...]     (default: main, every models/*.yaml)

Runs `python -m verifier check MODEL --format json` in this tree and in REV (exported with
`git archive`), drops the run times (`seconds`), hashes and file positions (line, col), and prints every
difference; exit 1 when there is one. For edits that must not change what a model means
(e.g. migrating a model to new language constructs).
"""
from __future__ import annotations

import difflib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOLATILE = {"seconds", "sha256", "model_sha256", "properties_sha256", "line", "col", "end_line", "end_col"}


def normalized(tree: Path, model: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "verifier", "check", model, "--format", "json"], cwd=tree,
                         capture_output=True, text=True, check=False)
    if not out.stdout.strip():
        return [f"no JSON (exit {out.returncode}): {out.stderr.strip()[-500:]}"]

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in VOLATILE}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o

    return json.dumps(strip(json.loads(out.stdout)), indent=1, sort_keys=True).splitlines()


def main(argv: list[str]) -> int:
    rev = argv[0] if argv else "main"
    models = argv[1:] or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "models").glob("*.yaml"))
    differ = 0
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        for model in models:
            lines = list(difflib.unified_diff(normalized(Path(tmp), model), normalized(ROOT, model),
                                              f"{rev}:{model}", model, lineterm="", n=1))
            print(f"{model}: {'identical' if not lines else f'{len(lines)} lines differ'}")
            print("\n".join(lines[:200]))
            differ += bool(lines)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
