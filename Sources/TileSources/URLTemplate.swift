public import TileMath

/// A tile URL template in Leaflet's grammar: `{z} {x} {y}`, `{-y}` (the TMS row), `{s}`
/// (a subdomain), `{r}` (`@2x` on high-density requests), plus `{q}` / `{quadkey}` (Bing)
/// and any named `{variable}` given (`{apikey}`, `{variant}`, `{floor}`). A key that is
/// neither is an error, as in Leaflet, so a typo is found when the template is read.
public struct URLTemplate: Hashable, Sendable, CustomStringConvertible {
    public let template: String
    public let subdomains: [String]
    public let variables: [String: String]
    let parts: [Part]

    enum Part: Hashable, Sendable {
        case literal(String)
        case placeholder(String)
    }

    static let builtIn: Set<String> = ["z", "x", "y", "-y", "s", "r", "q", "quadkey"]

    /// Parses a template; `subdomains` fill `{s}` (chosen per tile as Leaflet does:
    /// `(x + y) mod count`); `variables` fill named keys and may override `{r}`.
    public init(_ template: String, subdomains: [String] = ["a", "b", "c"], variables: [String: String] = [:]) throws(URLTemplateError) {
        var parts = [Part]()
        var literal = ""
        var index = template.startIndex
        while index < template.endIndex {
            let character = template[index]
            if character == "{" {
                let after = template.index(after: index)
                // A "{" before the next "}" means this one was never closed.
                guard let close = template[after...].firstIndex(where: { $0 == "}" || $0 == "{" }), template[close] == "}" else {
                    throw .unclosedBrace(template, offset: template.distance(from: template.startIndex, to: index))
                }
                let key = String(template[template.index(after: index)..<close])
                guard !key.isEmpty else { throw .emptyPlaceholder(template) }
                guard Self.builtIn.contains(key) || variables[key] != nil else { throw .unknownPlaceholder(key) }
                if !literal.isEmpty { parts.append(.literal(literal)); literal = "" }
                parts.append(.placeholder(key))
                index = template.index(after: close)
            } else {
                literal.append(character)
                index = template.index(after: index)
            }
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        let keys = Set(parts.compactMap { if case .placeholder(let k) = $0 { return k } else { return nil } })
        guard keys.contains("q") || keys.contains("quadkey") || (keys.contains("z") && keys.contains("x") && (keys.contains("y") || keys.contains("-y"))) else {
            throw .missingTileKeys(template)
        }
        if keys.contains("s"), subdomains.isEmpty { throw .noSubdomains(template) }
        self.template = template
        self.subdomains = subdomains
        self.variables = variables
        self.parts = parts
    }

    /// Subdomains as written on a command line: `abc` is a, b, c; `t1,t2` is t1, t2.
    public static func subdomains(_ text: String) -> [String] {
        text.contains(",") ? text.split(separator: ",").map(String.init) : text.map(String.init)
    }

    /// The URL of a tile at a pixel density (`{r}` is `@2x` at scale 2 and more).
    public func url(for tile: TileID, scale: Int = 1) -> String {
        var url = ""
        for part in parts {
            switch part {
            case .literal(let text): url += text
            case .placeholder(let key):
                if let value = variables[key] { url += value; continue }
                switch key {
                case "z": url += String(tile.z)
                case "x": url += String(tile.x)
                case "y": url += String(tile.y)
                case "-y": url += String(tile.tmsY)
                case "s": url += subdomains[(tile.x + tile.y) % subdomains.count]
                case "r": url += scale >= 2 ? "@\(scale)x" : ""
                case "q", "quadkey": url += tile.quadkey
                default: break  // unreachable: keys were checked when parsing
                }
            }
        }
        return url
    }

    public var description: String { template }
}

public enum URLTemplateError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownPlaceholder(String)
    case unclosedBrace(String, offset: Int)
    case emptyPlaceholder(String)
    case missingTileKeys(String)
    case noSubdomains(String)

    public var description: String {
        switch self {
        case .unknownPlaceholder(let key):
            return "unknown key {\(key)} in the URL template; known keys are {z} {x} {y} {-y} {s} {r} {q} {quadkey} and variables given with --var \(key)=VALUE"
        case .unclosedBrace(let template, let offset): return "URL template \"\(template)\": \"{\" at offset \(offset) is never closed"
        case .emptyPlaceholder(let template): return "URL template \"\(template)\" has an empty {}"
        case .missingTileKeys(let template): return "URL template \"\(template)\" has neither {z}, {x} and {y} nor {q}"
        case .noSubdomains(let template): return "URL template \"\(template)\" uses {s} but no subdomains are given"
        }
    }
}
