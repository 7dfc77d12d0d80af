pragma Singleton
import QtQuick

// Colours and sizes shared by every view (one dark theme for now).
QtObject {
    readonly property color window: "#15171c"
    readonly property color sidebar: "#1b1e25"
    readonly property color surface: "#222632"
    readonly property color surfaceHover: "#2a2f3d"
    readonly property color border: "#2d3240"
    readonly property color text: "#e7e9ef"
    readonly property color textDim: "#9aa1b2"
    readonly property color accent: "#7f9cff"
    readonly property color accentText: "#0d1020"
    readonly property color userBubble: "#2a3352"
    readonly property color code: "#0e1014"
    // Code blocks: plain text and the syntax highlighter's colours.
    readonly property color codeText: "#d5dbe8"
    readonly property color codeKeyword: "#c792ea"
    readonly property color codeString: "#a5d6a7"
    readonly property color codeNumber: "#f2a86a"
    readonly property color codeComment: "#737d92"
    readonly property color codeType: "#72cfe0"
    readonly property color codeFunction: "#82aaff"
    readonly property color danger: "#f0616d"
    readonly property color dangerSurface: "#3a1d24"
    readonly property string mono: "DejaVu Sans Mono"
    readonly property int radius: 8
    readonly property int fontSize: 14
}
