"""Base A tool spec."""

import requests
from llama_index.core.tools.tool_spec.base import BaseToolSpec

API = "https://api.basea.test/v1"


class BaseASpec(BaseToolSpec):
    """Base A."""

    spec_functions = ["search", ("fetch", "afetch")]

    def __init__(self, api_key: str, timeout: int = 10) -> None:
        self.api_key = api_key

    def search(self, query: str, limit: int = 5) -> list:
        """
        Search Base A for documents.

        Args:
            query (str): the query
            limit (int): how many
        """
        return requests.get(API, params={"q": query}).json()

    def fetch(self, url: str) -> str:
        """Fetch one document from Base A."""
        return ""

    async def afetch(self, url: str) -> str:
        """Async fetch."""
        return ""
