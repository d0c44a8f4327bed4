go test fuzz v1
[]byte("\x22use strict\x22; const help = \x22https://www.weather.test/about\x22;\n")
