import os

WEATHER_URL = "https://api.weather.test/v1/forecast"


class WeatherAPIWrapper:
    """Calls the weather API. See https://docs.weather.test for details."""

    def validate(self, values):
        values["key"] = get_from_dict_or_env(values, "key", "WEATHER_API_KEY")
        values["region"] = get_from_dict_or_env(values, "region", "WEATHER_REGION", default="eu")
        return values
