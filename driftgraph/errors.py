"""The base of every error driftgraph explains to a user in one line (the CLI prints these, no traceback)."""


class DriftgraphError(Exception):
    pass
