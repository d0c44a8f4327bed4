"use strict"; const help = "https://www.weather.test/about";
