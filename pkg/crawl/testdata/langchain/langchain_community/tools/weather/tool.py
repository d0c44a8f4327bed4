from typing import Optional

from langchain_community.tools.weather.base import WeatherBaseTool
from langchain_community.utilities.weather import WeatherAPIWrapper

PREFIX = "Weather"


class WeatherTool(WeatherBaseTool):
    """Inherits its description from base.py."""

    name: str = "weather_lookup"
    api_wrapper: WeatherAPIWrapper


class WeatherForecastTool(WeatherBaseTool):
    name: str = "weather_forecast"
    description: str = PREFIX + " forecast " "for the next days."


class DynamicWeatherTool(WeatherBaseTool):
    name: str = f"weather_{PREFIX}"
    description: str = f"Weather for {PREFIX}"


class StaticFStringTool(WeatherBaseTool):
    name: str = f"static_weather"
    description: str = f"No placeholders {{here}}"


# Deprecated alias: the same tool, not a second one.
OldWeatherTool = WeatherTool


class LegacyWeatherTool(WeatherTool):
    pass


class NotATool:
    name: str = "not_a_tool"
    description: str = "Not derived from BaseTool."
