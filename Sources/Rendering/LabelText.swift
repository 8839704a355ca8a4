import Foundation

/// The text a label draws: a feature's title made safe to lay out.
///
/// Control characters (C0, C1, DEL) and bidi overrides and isolates are removed; line
/// breaks and tabs become spaces; runs of spaces become one. The result is cut to
/// `maxCharacters` user-perceived characters (the last one an ellipsis, "…") and to
/// `maxScalars` Unicode scalars (so a letter with thousands of combining marks is cut too).
/// Only the first `maxScalars` scalars of a title are ever looked at, so a title of
/// megabytes costs no more than a short one.
public enum LabelText {
    /// The most characters a drawn label has, its ellipsis included.
    public static let maxCharacters = 64
    /// The most Unicode scalars a drawn label has.
    public static let maxScalars = 256

    /// The label for a title; nil when nothing drawable is left.
    public static func clean(_ title: String) -> String? {
        var scalars = String.UnicodeScalarView()
        var truncated = false
        var lastWasSpace = true  // drops leading spaces
        for scalar in title.unicodeScalars {
            if scalars.count >= maxScalars { truncated = true; break }
            let value = scalar.value
            if value == 0x09 || value == 0x0A || value == 0x0D || scalar.properties.isWhitespace {
                if !lastWasSpace { scalars.append(" ") }
                lastWasSpace = true
                continue
            }
            if scalar.properties.generalCategory == .control { continue }
            // Bidi embeddings, overrides and isolates: they would reorder the rest of the map's text.
            if (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) { continue }
            scalars.append(scalar)
            lastWasSpace = false
        }
        var text = String(scalars)
        while text.last == " " { text.removeLast() }
        if text.count > maxCharacters || (truncated && !text.isEmpty) {
            text = String(text.prefix(maxCharacters - 1))
            while text.last == " " { text.removeLast() }
            text += "…"
        }
        return text.isEmpty ? nil : text
    }
}
