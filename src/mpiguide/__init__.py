"""mpiguide: verify self-consistent MPI performance guidelines."""

__version__ = "0.1.0"
