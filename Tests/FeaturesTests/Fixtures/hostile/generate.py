#!/usr/bin/env python3
"""Writes the hostile inputs of issue 11 that FeaturesTests/HostileInputTests reads.

Each file once crashed, hung or overflowed a reader (Foundation's XMLParser on Linux traps
on several of them); now each must be a FeatureError naming the file and the place.
Run from this folder: python3 generate.py (deterministic; the files are committed).
"""
import random

def write(name, data):
    with open(name, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())

# XML (read as GPX, KML and plist alike)
write("invalid-utf8-comment.xml", b"<!--\x8b-->")                       # 8 bytes: XMLParser trapped
write("pi-without-target.xml", "<?xml version=\"1.0\"?>\n<gpx>\n<? ?></gpx>\n")
write("xml-declaration-inside.xml", "<?xml version=\"1.0\"?>\n<gpx>\n  <?xml version=\"1.0\"?>\n</gpx>\n")
write("bad-start-element.xml", "<gpx>\n<1wpt lat=\"1\" lon=\"2\"/></gpx>\n")
write("duplicate-attribute.xml", "<gpx>\n<wpt lat=\"1\" lat=\"2\" lon=\"3\"/></gpx>\n")
write("unquoted-attribute.xml", "<gpx>\n<wpt lat=1 lon=2/></gpx>\n")
write("deep-nesting.xml", "<gpx>" + "<a>" * 37000 + "</a>" * 37000 + "</gpx>")  # XMLParser overflowed the stack
write("unclosed.xml", "<?xml version=\"1.0\"?>\n<gpx>\n  <wpt lat=\"1\" lon=\"2\">\n")
write("empty.xml", b"")
rng = random.Random(11)
write("binary-garbage.xml", bytes(rng.randrange(256) for _ in range(512)))
# Entities: every declaration is refused before anything expands.
laughs = ["<?xml version=\"1.0\"?>", "<!DOCTYPE gpx [", " <!ENTITY lol \"lol\">"]
for n in range(1, 10):
    laughs.append(f" <!ENTITY lol{n} \"" + f"&lol{n - 1 if n > 1 else ''};" * 10 + "\">")
laughs += ["]>", "<gpx><wpt lat=\"1\" lon=\"2\"><name>&lol9;</name></wpt></gpx>", ""]
write("billion-laughs.gpx", "\n".join(laughs).replace("&lol0;", "&lol;"))
write("external-entity.gpx", "<?xml version=\"1.0\"?>\n<!DOCTYPE gpx [\n <!ENTITY x SYSTEM \"file:///etc/passwd\">\n]>\n"
      "<gpx><wpt lat=\"1\" lon=\"2\"><name>&x;</name></wpt></gpx>\n")
write("undeclared-entity.plist", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n"
      "<plist version=\"1.0\">\n<array>\n  <string>&lat;</string>\n</array>\n</plist>\n")
write("binary.plist", b"bplist00\xd1\x01\x02Q")

# JSON
write("deep-arrays.geojson", "[" * 100000)
write("deep-objects.geojson", "{\"a\":" * 20000)
write("deep-properties.geojson", "{\"type\": \"Feature\", \"geometry\": null,\n \"properties\": " + "{\"a\": " * 300 + "1" + "}" * 300 + "}\n")
point = "{\"type\": \"Feature\", \"properties\": {},\n \"geometry\": {\"type\": \"Point\", \"coordinates\": %s}}\n"
write("huge-number.geojson", point % "[1e309, 0]")
write("tiny-number.geojson", point % "[0, 1e-400]")
write("latitude-91.geojson", point % "[0, 91]")
write("longitude-1e300.geojson", point % "[1e300, 0]")
write("one-point-ring.geojson", "{\"type\": \"Polygon\", \"coordinates\": [[[0, 0]]]}\n")
write("zero-area-image.geojson", "{\"type\": \"Feature\", \"geometry\": null, \"properties\": "
      "{\"image\": \"a.png\", \"image-bbox\": [10, 20, 10, 30]}}\n")
write("infinite-dash.geojson", "{\"type\": \"Feature\", \"geometry\": {\"type\": \"LineString\", \"coordinates\": [[0, 0], [1, 1]]},"
      " \"properties\": {\"stroke-dash\": [4, 1e308]}}\n")
