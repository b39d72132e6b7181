"""turnproof: a model checker and rules-consistency verifier for game turn structures."""
import os

__version__ = "0.1.0"

# turnproof does no linear algebra: a BLAS thread pool (numpy's) would only cost memory,
# and under a tight `ulimit -v` its start can spin forever in a forked worker
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
