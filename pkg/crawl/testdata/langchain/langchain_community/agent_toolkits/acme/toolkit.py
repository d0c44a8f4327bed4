from typing import Dict, List

from langchain_community.tools.acme.prompt import (
    ACME_CREATE_PROMPT,
    ACME_LIST_PROMPT,
)
from langchain_community.tools.acme.tool import AcmeAction


class AcmeToolkit(BaseToolkit):
    @classmethod
    def from_wrapper(cls, wrapper) -> "AcmeToolkit":
        operations: List[Dict] = [
            {"mode": "list", "name": "list_widgets", "description": ACME_LIST_PROMPT},
            {
                "mode": "create",
                "name": "Create Widget",
                "description": ACME_CREATE_PROMPT,
            },
            {"mode": "other", "name": "dynamic_op", "description": f"Runs {cls.__name__}"},
        ]
        return cls(tools=[AcmeAction(**op) for op in operations])
