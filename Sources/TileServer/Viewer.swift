import Foundation
import TileMath
import TileSources
import MapProjects

/// The browser viewer: Leaflet (Debian's libjs-leaflet, served from /assets/) on one map,
/// configured by a JSON block in the page.
enum Viewer {
    static func page(for map: ServedMap, tileJSONURL: String) -> String {
        let project = map.project
        let json = ViewerConfig(map: map, tileJSONURL: tileJSONURL).json
        return """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(project.title)) · TileKit</title>
        <link rel="stylesheet" href="/assets/leaflet.css">
        <link rel="stylesheet" href="/assets/viewer.css">
        </head>
        <body>
        <div id="map"></div>
        <script id="tilekit-config" type="application/json">\(json.replacingOccurrences(of: "</", with: "<\\/"))</script>
        <script src="/assets/leaflet.js"></script>
        <script src="/assets/viewer.js"></script>
        </body>
        </html>

        """
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static let style = """
    html, body, #map { height: 100%; margin: 0; }
    .tk-grid { outline: 1px solid rgba(200, 30, 30, 0.6); font: 12px/1.2 monospace; color: #b00; }
    .tk-grid span { background: rgba(255, 255, 255, 0.75); padding: 1px 3px; display: inline-block; margin: 2px; }
    .tk-grid.tk-fallback { background: rgba(255, 160, 0, 0.18); }
    .tk-grid.tk-overzoomed { background: rgba(0, 120, 255, 0.15); }
    .tk-grid { position: relative; }
    .tk-label-box { position: absolute; outline: 1px dashed rgba(120, 0, 160, 0.9); font: 9px/1 monospace; color: #60a; }
    .tk-label-box span { position: absolute; left: 0; top: 100%; margin: 0; padding: 0 2px; white-space: nowrap; }
    .tk-hit { cursor: pointer; }
    .tk-popup-title { font-weight: bold; }
    .tk-popup-subtitle { color: #555; }
    .tk-locate, .tk-play { background: #fff; padding: 4px 8px; cursor: pointer; font: 13px sans-serif; }
    .tk-encounter { font-weight: bold; }

    """

    /// The viewer's script: layers control, popups, limits, @2x, debug grid, location, shimmer.
    static let script = #"""
    (function () {
      "use strict";
      var config = JSON.parse(document.getElementById("tilekit-config").textContent);
      var options = { minZoom: config.minZoom, maxZoom: config.maxZoom, zoomControl: true };
      if (config.bounds) { options.maxBounds = config.bounds; options.maxBoundsViscosity = 1.0; }
      var map = L.map("map", options).setView(config.center, config.zoom);
      window.tilekitMap = map;
      if (config.attribution) map.attributionControl.addAttribution(config.attribution);
      map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a> · TileKit');

      var bases = {}, overlays = {}, firstBase = null;
      window.tilekitLayers = {};
      config.layers.forEach(function (layer) {
        // {r} is "@2x" on high-DPI screens: the server draws those tiles at twice the pixels.
        var tiles = L.tileLayer(layer.tiles, {
          minZoom: layer.minZoom, maxZoom: layer.maxZoom, opacity: layer.opacity, zIndex: layer.zIndex,
          bounds: layer.bounds, detectRetina: false, className: "tk-layer-" + layer.id
        });
        var group = L.layerGroup([tiles]);
        if (layer.features) addFeatures(layer, group);
        window.tilekitLayers[layer.id] = group;
        if (layer.base) {
          bases[layer.title] = group;
          if (layer.visible && !firstBase) { firstBase = group; group.addTo(map); }
        } else {
          overlays[layer.title] = group;
          if (layer.visible) group.addTo(map);
        }
      });

      // Clickable markers over the server-drawn icons, with MKAnnotation's title and subtitle.
      function addFeatures(layer, group) {
        fetch(layer.features).then(function (r) { return r.json(); }).then(function (collection) {
          var shimmer = [];
          L.geoJSON(collection, {
            filter: function (f) {
              if (f.properties && f.properties.renderer === "shimmer") { shimmer.push(f); return false; }
              return f.geometry && (f.geometry.type === "Point" || f.geometry.type === "MultiPoint") && !(f.properties && f.properties.radius);
            },
            pointToLayer: function (f, latlng) {
              return L.circleMarker(latlng, { radius: 12, opacity: 0, fillOpacity: 0, className: "tk-hit" });
            },
            onEachFeature: function (f, marker) {
              var p = f.properties || {};
              if (!p.title && !p.description) return;
              var html = '<div class="tk-popup-title"></div><div class="tk-popup-subtitle"></div>';
              var box = document.createElement("div");
              box.innerHTML = html;
              box.firstChild.textContent = p.title || "";
              box.lastChild.textContent = p.description || "";
              marker.bindPopup(box);
            }
          }).addTo(group);
          if (shimmer.length) addShimmer(shimmer, group);
        }).catch(function (e) { console.warn("features of " + layer.id + ": " + e); });
      }

      // The shimmering water, animated here: an SVG gradient sliding across the polygons.
      function addShimmer(features, group) {
        var renderer = L.svg({ padding: 0.5 });
        var shapes = L.geoJSON({ type: "FeatureCollection", features: features }, {
          renderer: renderer, interactive: false,
          style: function () { return { stroke: false, fillOpacity: 1, fillColor: "url(#tk-shimmer)", className: "tk-shimmer" }; }
        });
        shapes.on("add", function () {
          var svg = renderer._container;
          if (!svg || svg.querySelector("#tk-shimmer")) return;
          var ns = "http://www.w3.org/2000/svg";
          var defs = document.createElementNS(ns, "defs");
          defs.innerHTML = '<linearGradient id="tk-shimmer" x1="0" y1="0" x2="1" y2="0.6" spreadMethod="repeat">' +
            '<stop offset="0" stop-color="#fff" stop-opacity="0"/><stop offset="0.45" stop-color="#fff" stop-opacity="0"/>' +
            '<stop offset="0.5" stop-color="#fff" stop-opacity="0.45"/><stop offset="0.55" stop-color="#fff" stop-opacity="0"/>' +
            '<stop offset="1" stop-color="#fff" stop-opacity="0"/>' +
            '<animateTransform attributeName="gradientTransform" type="translate" from="-1 0" to="1 0" dur="4s" repeatCount="indefinite"/>' +
            '</linearGradient>';
          svg.insertBefore(defs, svg.firstChild);
        });
        shapes.addTo(group);
      }

      // Debug: the tile grid with z/x/y, tinted where the tile is a fallback or overzoomed.
      var Grid = L.GridLayer.extend({
        createTile: function (coords) {
          var tile = L.DomUtil.create("div", "tk-grid");
          var label = L.DomUtil.create("span", "", tile);
          var address = coords.z + "/" + coords.x + "/" + coords.y;
          label.textContent = address;
          fetch((config.debugTiles || config.composed).replace("{z}", coords.z).replace("{x}", coords.x).replace("{y}", coords.y), { method: "HEAD" })
            .then(function (r) {
              var how = r.headers.get("X-Tile-Provenance") || (r.status === 200 ? "" : String(r.status));
              if (how) label.textContent = address + " · " + how;
              if (how.indexOf("fallback") >= 0) L.DomUtil.addClass(tile, "tk-fallback");
              if (how.indexOf("overzoomed") >= 0) L.DomUtil.addClass(tile, "tk-overzoomed");
            }).catch(function () {});
          // Each label drawn in this tile: its box (tile pixels) outlined, its text and box beside.
          if (config.debugLabels) {
            var n = Math.pow(2, coords.z);
            var lon = (coords.x + 0.5) / n * 360 - 180;
            var lat = Math.atan(Math.sinh(Math.PI * (1 - 2 * (coords.y + 0.5) / n))) * 180 / Math.PI;
            fetch(config.debugLabels.replace("{lon}", lon.toFixed(9)).replace("{lat}", lat.toFixed(9)).replace("{z}", coords.z))
              .then(function (r) { return r.ok ? r.json() : { labels: [] }; })
              .then(function (g) {
                (g.labels || []).forEach(function (l) {
                  var box = L.DomUtil.create("div", "tk-label-box", tile);
                  box.style.left = l.x + "px"; box.style.top = l.y + "px";
                  box.style.width = l.width + "px"; box.style.height = l.height + "px";
                  var where = l.text + " [" + l.x + "," + l.y + " " + l.width + "x" + l.height + "]";
                  box.title = l.kind + ": " + where;
                  box.setAttribute("data-label", l.text);
                  L.DomUtil.create("span", "", box).textContent = where;
                });
              }).catch(function () {});
          }
          return tile;
        }
      });
      overlays["Tile grid (debug)"] = new Grid({ zIndex: 1000, minZoom: config.minZoom, maxZoom: config.maxZoom });

      L.control.layers(bases, overlays, { collapsed: false }).addTo(map);

      // The user's location, with the hero icon.
      var hero = L.icon({ iconUrl: "/assets/hero.png", iconSize: [28, 28], iconAnchor: [14, 14] });
      var me = null;
      var Locate = L.Control.extend({
        onAdd: function () {
          var button = L.DomUtil.create("div", "leaflet-bar tk-locate");
          button.textContent = "Where am I?";
          L.DomEvent.on(button, "click", function (e) { L.DomEvent.stop(e); map.locate({ setView: true, watch: true, maxZoom: config.maxZoom }); });
          return button;
        }
      });
      new Locate({ position: "topleft" }).addTo(map);
      map.on("locationfound", function (e) {
        if (!me) me = L.marker(e.latlng, { icon: hero, title: "You" }).addTo(map); else me.setLatLng(e.latlng);
      });
      map.on("locationerror", function (e) { console.info("location: " + e.message); });
      window.tilekitHero = function (lat, lon) {
        if (!me) me = L.marker([lat, lon], { icon: hero, title: "Hero" }).addTo(map); else me.setLatLng([lat, lon]);
        return me;
      };

      // The game: the server plays a route as server-sent events; the hero walks it and
      // each encounter opens a popup where it happened.
      window.tilekitEncounters = [];
      window.tilekitPositions = 0;
      var playing = null;
      function play(route, timeWarp) {
        if (playing) playing.close();
        var source = new EventSource(config.game.play + "?gpx=" + encodeURIComponent(route) + (timeWarp ? "&time-warp=" + timeWarp : ""));
        playing = source;
        source.addEventListener("position", function (e) {
          var d = JSON.parse(e.data);
          window.tilekitPositions += 1;
          window.tilekitHero(d.lat, d.lon);
        });
        source.addEventListener("enter", function (e) {
          var d = JSON.parse(e.data);
          window.tilekitEncounters.push(d);
          var box = document.createElement("div");
          box.className = "tk-encounter";
          box.textContent = (d.title || d.poi) + " · " + d.kind;
          var popup = L.popup({ autoClose: false, closeOnClick: false }).setLatLng([d.lat, d.lon]).setContent(box).openOn(map);
          if (d.kind === "warp") offerWarps(d.poi, box, popup);
        });
        source.addEventListener("end", function () { source.close(); playing = null; });
        source.onerror = function () { if (source.readyState === 2) playing = null; };
      }
      window.tilekitPlay = play;

      // A warp zone offers the stations on its lines; taking one moves the hero there.
      function offerWarps(station, box, popup) {
        fetch(config.game.warps + encodeURIComponent(station) + ".json").then(function (r) { return r.json(); }).then(function (w) {
          w.destinations.slice(0, 6).forEach(function (to) {
            var link = document.createElement("a");
            link.href = "#";
            link.className = "tk-warp";
            link.textContent = "warp to " + to.title + " (" + to.lines.join(" ") + ")";
            link.addEventListener("click", function (e) {
              e.preventDefault();
              if (playing) { playing.close(); playing = null; }
              window.tilekitHero(to.lat, to.lon);
              map.panTo([to.lat, to.lon]);
              map.closePopup(popup);
              window.tilekitWarped = to.id;
            });
            box.appendChild(document.createElement("br"));
            box.appendChild(link);
          });
          popup.update();
        }).catch(function () {});
      }
      if (config.game) {
        var Play = L.Control.extend({
          onAdd: function () {
            var bar = L.DomUtil.create("div", "leaflet-bar");
            config.game.routes.forEach(function (route) {
              var button = L.DomUtil.create("div", "tk-play", bar);
              button.textContent = "\u25B6 " + route;
              L.DomEvent.on(button, "click", function (e) { L.DomEvent.stop(e); play(route); });
            });
            return bar;
          }
        });
        new Play({ position: "bottomleft" }).addTo(map);
        if (config.game.autoplay) play(config.game.autoplay);
      }
    })();

    """#
}
