class BrokenTool(BaseTool):
    name: str = "broken
    description: str = "never read"
