"""A mutation run's journal (`turnproof mutate --journal FILE`): each decided mutant is appended
as one JSON line the moment it is decided, so a run that is killed, times out or loses its
machine keeps what it did, and the same command started again checks only the rest.

The first line names what the outcomes depend on (the model and claim files' contents, the
reading, the parameters, whether the analyses take part); a journal written for anything else
is refused rather than mixed in. UNKNOWN outcomes are not reused: a larger budget may decide them.
A last line cut off mid-write (the process was killed) is ignored; any other unreadable line
is an error with its line number.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from verifier import __version__
from verifier.diagnostics import Diagnostic, Span, UsageError
from verifier.mutation.operators import Mutant
from verifier.mutation.results import STATUSES, Outcome

FORMAT = "turnproof-mutation-journal/1"
REUSED = frozenset(STATUSES) - {"unknown"}
HINT = "delete the journal (or name another file) to start this run afresh"


@dataclass(frozen=True)
class RunKey:
    """What a mutant's outcome depends on."""

    model_sha256: str
    properties_sha256: str | None
    variant: str | None
    params: tuple[tuple[str, int | None], ...]
    consistency: bool

    @classmethod
    def of(cls, model_path: str, properties_path: str | None, variant: str | None,
           params: tuple[tuple[str, int | None], ...], consistency: bool) -> RunKey:
        return cls(_sha256(model_path), None if properties_path is None else _sha256(properties_path), variant,
                   params, consistency)

    def header(self) -> dict[str, Any]:
        return {"format": FORMAT, "turnproof": __version__, "model_sha256": self.model_sha256,
                "properties_sha256": self.properties_sha256, "variant": self.variant,
                "params": [list(p) for p in self.params], "consistency": self.consistency}


class Journal:
    """Outcomes read from an earlier run of the same question, and the file new ones are added to."""

    def __init__(self, path: str, key: RunKey, mutants: list[Mutant]):
        self.path = Path(path)
        self.key = key
        self.earlier: dict[str, Outcome] = {}
        by_id = {m.id: m for m in mutants}
        fresh = not self.path.exists() or self.path.stat().st_size == 0 or not self._read(by_id)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)     # as -o makes the folders it names
            self._out: IO[str] = self.path.open("a", encoding="utf-8")
        except OSError as err:
            raise UsageError(Diagnostic(f"cannot write the journal {self.path}: {err.strerror}",
                                        hint="name a file in a folder that can be written")) from None
        if fresh:
            self._write(key.header())

    def add(self, outcome: Outcome) -> None:
        """Record one decided mutant (flushed at once, so a kill right after keeps it)."""
        if outcome.status in REUSED:
            self._write({"id": outcome.mutant.id, "status": outcome.status, "reason": outcome.reason,
                         "seconds": round(outcome.seconds, 3)})

    def close(self) -> None:
        self._out.close()

    def _write(self, record: dict[str, Any]) -> None:
        self._out.write(_line(record))
        self._out.flush()

    def _read(self, by_id: dict[str, Mutant]) -> bool:
        """Load the earlier outcomes; False when the file holds only a header cut off mid-write.
        Nothing is changed in a file that is not this run's journal."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except IsADirectoryError:
            raise UsageError(Diagnostic(f"the journal {self.path} is a folder", hint=HINT)) from None
        except (OSError, UnicodeDecodeError) as err:
            raise UsageError(Diagnostic(f"cannot read the journal {self.path}: {err}", hint=HINT)) from None
        header = _line(self.key.header())
        *complete, tail = text.split("\n")             # `tail`: a line cut off mid-write, if any
        if not complete:
            if not header.startswith(text):
                raise self._error(1, "not a journal of turnproof mutate (no complete first line)")
            os.truncate(self.path, 0)
            return False
        if complete[0] + "\n" != header:
            self._record(complete[0], 1)
            raise self._error(1, "the journal was written for another model, claim file, reading, parameters, "
                                 "analyses setting or turnproof version")
        for number, line in enumerate(complete[1:], start=2):
            record = self._record(line, number)
            mutant = by_id.get(str(record.get("id")))
            status, reason, seconds = record.get("status"), record.get("reason"), record.get("seconds")
            if (mutant is None or status not in REUSED or not isinstance(reason, str)
                    or not isinstance(seconds, (int, float))):
                raise self._error(number, "not an outcome of this run's mutants")
            self.earlier[mutant.id] = Outcome(mutant, status, reason, float(seconds))
        if tail:
            os.truncate(self.path, len(text.encode("utf-8")) - len(tail.encode("utf-8")))
        return True

    def _record(self, line: str, number: int) -> dict[str, Any]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise self._error(number, "not a JSON line") from None
        if not isinstance(record, dict):
            raise self._error(number, "not a JSON object")
        return record

    def _error(self, line: int, message: str) -> UsageError:
        return UsageError(Diagnostic(f"journal {self.path}: {message}", span=Span(str(self.path), line, 1),
                                     hint=HINT))


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True) + "\n"


def _sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
