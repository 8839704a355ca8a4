import Foundation
import TileKitCLI

exit(TileKitCommand.run(Array(CommandLine.arguments.dropFirst())))
