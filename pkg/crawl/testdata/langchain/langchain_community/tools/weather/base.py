from langchain_core.tools import BaseTool as CoreBaseTool


class WeatherBaseTool(CoreBaseTool):
    """Shared base: no name of its own, so not a tool itself."""

    description: str = (
        "Looks up the weather. "
        "Input should be a city name."
    )
