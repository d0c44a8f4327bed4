from crewai.tools import BaseTool


class DynamicTool(BaseTool):
    """Name and description come from the remote service at run time."""

    def __init__(self, remote_name: str, **kwargs):
        super().__init__(name=remote_name, description=f"Remote {remote_name}", **kwargs)
