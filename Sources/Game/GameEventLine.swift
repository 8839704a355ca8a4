import Foundation
public import TileMath

/// One line of the game's JSON output (`tilekit simulate`, the server's `/play` stream): an
/// encounter `{"event":"enter","kind":…,"lat":…,"lon":…,"poi":id,"t":…}` (with the point's
/// `"title"` when asked, for the viewer's popups) or a position `{"lat":…,"lon":…,"t":…}`
/// (`"event":"position"` in `simulate --positions`). Keys sorted; seconds rounded to the
/// millisecond and degrees to 7 decimals (about 1 cm), so a line is short and the same on
/// every machine.
public struct GameEventLine: Encodable, Sendable {
    /// Seconds from the start of the route, to the millisecond.
    public var t: Double
    public var event: String?
    public var poi: String?
    public var kind: String?
    public var lon: Double
    public var lat: Double
    public var title: String?

    public init(_ event: EncounterEvent, withTitle: Bool = false) {
        self.init(secondsFromStart: event.secondsFromStart, position: event.position, event: event.kind.rawValue)
        poi = event.poi.id
        kind = event.poi.kind.rawValue
        if withTitle { title = event.poi.title }
    }

    /// A position `secondsFromStart` into the route; `event` names it as one (`"position"`)
    /// among events.
    public init(secondsFromStart: Double, position: Coordinate, event: String? = nil) {
        t = secondsFromStart.rounded(decimals: 3)
        let p = position.rounded(decimals: 7)
        lon = p.longitude
        lat = p.latitude
        self.event = event
    }

    /// The line, without its newline. Strings are escaped by JSONEncoder, control characters
    /// included: a newline in a title must not end the line (or the server-sent event that
    /// carries it). "{}" if a number is not finite (a route's times and positions are).
    public var text: String {
        sortedJSONText() ?? "{}"
    }
}
