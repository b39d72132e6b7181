"""`turnproof diff`: what a rule change altered between two versions of a model.

`versions` reads a version (a file, or one at a git revision), `compare` checks both and
compares them, `changes` holds what it found (data only); `report.diff` writes it as text,
Markdown or JSON.

Three comparisons, each per pair of readings (`compare.reading_pairs`: the same name; a
version without readings against each of the other's; a renamed reading, paired by its rules
or its doc and citation); a reading nothing pairs has its claims and findings listed as added
or removed:

- **claims**: the verdict of every claim (same id) in OLD and in NEW; claims only
  in one version are listed as added or removed;
- **findings**: rules-consistency findings (by `Finding.key`) that appeared or
  disappeared;
- **behaviours**: the reachable states of both versions, projected on the state
  slots both share (same variable, same element: `hand[1]`, `phase`), compared
  as sets of display values (enum names, booleans, integers), so that a
  renumbered enum or a widened range compares by meaning. For each projected
  state that NEW allows and OLD does not (and the reverse) the shortest trace
  reaching it is known from breadth-first search. Listed first, and limited, are
  the states where a version *first departs* from the other: the state's shortest
  trace reaches it from a state the other version also allows (or it is initial).
  Every other new state lies beyond one of those; the counts give them all.
  Values a slot never takes in the other version are pointed out ("novel").

A version is a file or `git:REV:path` (the file at a git revision; its default
property file `properties/<stem>.yaml` is read from the same revision).
Behaviours need a complete exploration of both versions: when a budget stops
either one, the behaviour comparison is reported incomplete (exit 3 when
nothing else changed).
"""
