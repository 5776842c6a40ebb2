import Glibc

/// curl's `-K/--config` files: one option per line, with or without its leading dashes
/// (`silent`, `--silent`, `-s`), its value after whitespace, `=` or `:` (`output = "a b.txt"`,
/// `url: http://x/`); double-quoted values take `\\`, `\"`, `\t`, `\n`, `\r` and `\v` escapes;
/// lines starting with `#` are comments. `-` reads standard input. A file may name another
/// (`config = other.txt`), up to a small depth.
enum ConfigFile {
    /// The command line with every `-K FILE` / `--config FILE` replaced by the file's options.
    static func expand(_ arguments: [String], depth: Int = 0) throws(UsageError) -> [String] {
        var out: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var file: String?
            if argument == "-K" || argument == "--config" {
                index += 1
                guard index < arguments.count else { throw UsageError(message: "option \(argument): requires parameter") }
                file = arguments[index]
            } else if argument.hasPrefix("-K"), !argument.hasPrefix("--") {
                file = String(argument.dropFirst(2))
            }
            if let file {
                guard depth < 8 else { throw UsageError(message: "config files nest too deeply at \(file)") }
                out += try expand(ConfigFile.arguments(of: try read(file), named: file), depth: depth + 1)
            } else {
                out.append(argument)
            }
            index += 1
        }
        return out
    }

    /// The arguments a config file's text stands for.
    static func arguments(of text: String, named name: String = "config") throws(UsageError) -> [String] {
        var out: [String] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            line = line.drop { $0 == " " || $0 == "\t" }
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let option = line.prefix { $0 != " " && $0 != "\t" && $0 != "=" && $0 != ":" }
            var rest = line[option.endIndex...].drop { $0 == " " || $0 == "\t" }
            if let first = rest.first, first == "=" || first == ":" {
                rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
            }
            out.append(option.hasPrefix("-") ? String(option) : "--" + option)
            if rest.isEmpty { continue }
            if rest.first == "\"" {
                guard let value = unquote(rest.dropFirst()) else {
                    throw UsageError(message: "\(name):\(number + 1): unterminated quoted value")
                }
                out.append(value)
            } else {
                out.append(String(rest.prefix { $0 != " " && $0 != "\t" }))
            }
        }
        return out
    }

    /// A quoted value's text up to its closing quote, escapes resolved; nil if it never closes.
    private static func unquote(_ text: Substring) -> String? {
        var value = ""
        var escaped = false
        for character in text {
            if escaped {
                switch character {
                case "t": value.append("\t")
                case "n": value.append("\n")
                case "r": value.append("\r")
                case "v": value.append("\u{0B}")
                default: value.append(character)
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                return value
            } else {
                value.append(character)
            }
        }
        return nil
    }

    private static func read(_ path: String) throws(UsageError) -> String {
        do {
            return String(decoding: try RequestData.readFile(path), as: UTF8.self)
        } catch {
            throw UsageError(message: "cannot read config from '\(path)'", code: 26)
        }
    }
}
