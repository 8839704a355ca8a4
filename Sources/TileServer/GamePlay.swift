import Foundation
import TileMath
import Game
import MapProjects

extension TileServer {
    /// `/maps/{map}/play?gpx=ROUTE[&time-warp=N][&loop=1]`: the route walked in real time as
    /// server-sent events: `position` every tick, `enter` and `exit` at encounters (with the
    /// point's title), `end` when the route is done.
    func play(_ request: HTTPRequest, map name: String) -> HTTPResponse {
        guard let map = maps[name] else { return .text(404, "no map \"\(name)\"") }
        guard let game = map.project.game else { return .text(404, "map \"\(name)\" has no game") }
        guard let routeName = request.query["gpx"] ?? game.autoplay ?? game.routes.keys.sorted().first, let route = map.routes[routeName] else {
            return .text(404, "map \"\(name)\" has no route \"\(request.query["gpx"] ?? "")\" (routes: \(game.routes.keys.sorted().joined(separator: ", ")))")
        }
        var warp = game.timeWarp
        if let text = request.query["time-warp"] {
            guard let value = Double(text), (0.1...1000).contains(value) else { return .text(400, "time-warp \"\(text)\" is not a number in 0.1-1000") }
            warp = value
        }
        let simulation: Simulation
        do {
            // The route was read when the map was opened; only its warp is this request's.
            simulation = try Simulation(playback: try route.warped(by: warp), pois: map.pois, tickSeconds: game.tickSeconds / warp)
        } catch {
            return .text(500, "route \(routeName): \(error)")
        }
        let loop = request.query["loop"] == "1"
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]) { stream in
            stream.write("retry: 3000\n\n")
            var lapSeconds = 0.0
            repeat {
                let started = ContinuousClock.now
                for step in simulation.steps(offsetSeconds: lapSeconds) {
                    if stream.isClosed { return }
                    switch step {
                    case .position(let seconds, let p):
                        let due = started + .milliseconds(Int((seconds - lapSeconds) * 1000))
                        if due > ContinuousClock.now { try? await Task.sleep(until: due) }
                        stream.write("event: position\ndata: \(GameEventLine(secondsFromStart: seconds, position: p).text)\n\n")
                    case .encounter(let event):
                        let line = GameEventLine(event, withTitle: true).text
                        stream.write("event: \(event.kind.rawValue)\ndata: \(line)\n\n")
                    }
                }
                stream.write("event: end\ndata: \(PlayEnd(route: routeName).sortedJSONText() ?? "{}")\n\n")
                lapSeconds += simulation.playback.durationSeconds + simulation.tickSeconds
            } while loop && !stream.isClosed
        }
    }

    /// The data of `/play`'s last event, `{"route":NAME}`: the route that ended.
    struct PlayEnd: Encodable {
        var route: String
    }

    /// `/maps/{map}/warps/{station}.json`: the stations a warp zone leads to (those sharing a line).
    func warps(_ request: HTTPRequest, map name: String, station: String) -> HTTPResponse {
        guard let map = maps[name] else { return .text(404, "no map \"\(name)\"") }
        let network = WarpNetwork(map.pois)
        guard let from = network.stations.first(where: { $0.id == station }) else { return .text(404, "map \"\(name)\" has no warp zone \"\(station)\"") }
        let warps = Warps(id: from.id, title: from.title ?? from.id, lines: from.lines,
                          destinations: network.destinations(from: station).map(Warps.Destination.init))
        return json(request, encoding: warps, maxAgeSeconds: 60)
    }
}

/// The JSON of `/maps/{map}/warps/{station}.json` (sorted keys).
struct Warps: Encodable {
    struct Destination: Encodable {
        var id: String
        var title: String
        var lines: [String]
        var lon: Double
        var lat: Double

        init(_ poi: PointOfInterest) {
            id = poi.id
            title = poi.title ?? poi.id
            lines = poi.lines
            lon = poi.coordinate.longitude
            lat = poi.coordinate.latitude
        }
    }

    var id: String
    var title: String
    var lines: [String]
    var destinations: [Destination]
}
