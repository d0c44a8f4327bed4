import os

from langchain_core.tools import BaseTool


class AcmeAction(BaseTool):
    """Generic action: the toolkit sets name and description."""

    name: str = ""
    description: str = ""
    mode: str

    def _run(self):
        token = os.environ["ACME_TOKEN"]
        return "https://{tenant}.acme.test/api"
