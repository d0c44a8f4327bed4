from llama_index.tools.basea import BaseASpec


class ExtBSpec(BaseASpec):
    """Extends Base A from another package: search is inherited, extra has no docstring."""

    spec_functions = ["search", "extra", "missing"]

    def __init__(self, token: str, region: str = "eu"):
        super().__init__(api_key=token)

    def extra(self, x):
        return x


class ExtCSpec(BaseASpec):
    """Inherits spec_functions and overrides fetch."""

    def fetch(self, url: str) -> str:
        """Fetch from C instead."""
        return url
