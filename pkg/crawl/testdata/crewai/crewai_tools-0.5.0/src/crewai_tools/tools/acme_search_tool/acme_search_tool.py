import os
from typing import Any

from crewai.tools import BaseTool, EnvVar
from pydantic import BaseModel, Field


class AcmeSearchToolSchema(BaseModel):
    query: str = Field(..., description="Search query")


class AcmeSearchTool(BaseTool):
    name: str = "Acme Search"
    description: str = (
        "A tool that searches Acme. "
        "Returns the top results."
    )
    args_schema: type[BaseModel] = AcmeSearchToolSchema
    base_url: str = "https://api.acme.test/v2/search"
    package_dependencies: list[str] = Field(default_factory=lambda: ["acme"])
    env_vars: list[EnvVar] = Field(
        default_factory=lambda: [
            EnvVar(name="ACME_API_KEY", description="API key for Acme", required=True),
            EnvVar(name="ACME_REGION", description="Region", required=False, default="eu"),
        ]
    )

    def _run(self, **kwargs: Any) -> Any:
        return None


class AcmeImageSearchTool(AcmeSearchTool):
    name: str = "Acme Image Search"
    description: str = "Searches Acme images."
    base_url: str = "https://api.acme.test/v2/images"


class AcmeSearchToolAlias(AcmeSearchTool):
    is_deprecated_alias: bool = True
