import Foundation
import TileKitCLI

exit(await TileKitCommand.run(Array(CommandLine.arguments.dropFirst())))
