/// Command-line tokens, classified before any command looks at them.
///
/// `--name=value` and `--name` are long options, `-x` a short one, `--` ends options, and
/// everything else (including `-` for stdin and negative numbers such as `-73.97`) is a
/// positional argument.
public enum Token: Equatable, Sendable {
    case option(name: String, inlineValue: String?)
    case positional(String)
    case endOfOptions

    public static func tokenize(_ arguments: [String]) -> [Token] {
        var tokens = [Token]()
        var optionsEnded = false
        for argument in arguments {
            if optionsEnded {
                tokens.append(.positional(argument))
            } else if argument == "--" {
                optionsEnded = true
                tokens.append(.endOfOptions)
            } else if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                if let equals = body.firstIndex(of: "=") {
                    tokens.append(.option(name: String(body[..<equals]), inlineValue: String(body[body.index(after: equals)...])))
                } else {
                    tokens.append(.option(name: String(body), inlineValue: nil))
                }
            } else if argument.hasPrefix("-"), argument.count > 1, Double(argument) == nil,
                      !(argument.dropFirst().first?.isNumber ?? false) {
                tokens.append(.option(name: String(argument.dropFirst()), inlineValue: nil))
            } else {
                tokens.append(.positional(argument))
            }
        }
        return tokens
    }
}

/// What a command accepts: options with or without a value, and short aliases.
public struct OptionSpec: Sendable {
    public var valued: Set<String>
    public var flags: Set<String>
    public var aliases: [String: String]

    public init(valued: Set<String> = [], flags: Set<String> = [], aliases: [String: String] = [:]) {
        self.valued = valued
        self.flags = flags.union(["help"])
        self.aliases = aliases.merging(["h": "help"]) { a, _ in a }
    }
}

/// Tokens bound to a command's options: positional arguments in order, option values by name.
public struct BoundArguments: Sendable {
    public var positionals: [String] = []
    public var values: [String: String] = [:]
    /// Every value of each valued option, in order (for repeatable options such as --var).
    public var repeated: [String: [String]] = [:]
    public var flags: Set<String> = []

    /// Binds tokens to a spec, throwing a usage error that names an unknown option or a
    /// missing value. A valued option takes the next token whatever it looks like, so
    /// `--zoom -1` reaches the command, which can say what is wrong with -1.
    public init(_ tokens: [Token], spec: OptionSpec) throws(CLIError) {
        var index = 0
        while index < tokens.count {
            defer { index += 1 }
            switch tokens[index] {
            case .positional(let text):
                positionals.append(text)
            case .endOfOptions:
                continue
            case .option(let rawName, let inlineValue):
                let name = spec.aliases[rawName] ?? rawName
                let spelled = rawName.count == 1 ? "-\(rawName)" : "--\(rawName)"
                if spec.flags.contains(name) {
                    guard inlineValue == nil else { throw .usage("option \(spelled) takes no value") }
                    flags.insert(name)
                } else if spec.valued.contains(name) {
                    if let inlineValue {
                        values[name] = inlineValue
                        repeated[name, default: []].append(inlineValue)
                    } else {
                        guard index + 1 < tokens.count else { throw .usage("option \(spelled) needs a value") }
                        index += 1
                        switch tokens[index] {
                        case .positional(let value): values[name] = value
                        case .option(let n, let v): values[name] = (n.count == 1 ? "-" : "--") + n + (v.map { "=\($0)" } ?? "")
                        case .endOfOptions: throw .usage("option \(spelled) needs a value")
                        }
                        repeated[name, default: []].append(values[name]!)
                    }
                } else {
                    throw .usage("unknown option \(spelled)")
                }
            }
        }
    }

    public func flag(_ name: String) -> Bool { flags.contains(name) }
    public func all(_ name: String) -> [String] { repeated[name] ?? [] }
}
