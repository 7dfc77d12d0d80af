pragma Singleton
import QtQuick

// Colours and sizes shared by every view, in a dark and a light palette with the same names.
// Main.qml binds `dark` to the theme setting (AppController.colorScheme), so a change applies
// live. The heatmap's ramp and tier colours (heat_colors.cpp) are the same in both: the map is
// a dark picture in either theme.
QtObject {
    property bool dark: true

    readonly property color window: dark ? "#15171c" : "#fbfbfd"
    readonly property color sidebar: dark ? "#1b1e25" : "#eff1f5"
    readonly property color surface: dark ? "#222632" : "#e1e5ed"
    readonly property color surfaceHover: dark ? "#2a2f3d" : "#d5dae4"
    readonly property color border: dark ? "#2d3240" : "#d0d5df"
    readonly property color text: dark ? "#e7e9ef" : "#1b1f29"
    readonly property color textDim: dark ? "#9aa1b2" : "#586074"
    readonly property color accent: dark ? "#7f9cff" : "#3451c7"
    readonly property color accentText: dark ? "#0d1020" : "#ffffff"
    readonly property color userBubble: dark ? "#2a3352" : "#dde5fb"
    readonly property color code: dark ? "#0e1014" : "#f1f3f7"
    // Code blocks: plain text and the syntax highlighter's colours.
    readonly property color codeText: dark ? "#d5dbe8" : "#24292f"
    readonly property color codeKeyword: dark ? "#c792ea" : "#8232b8"
    readonly property color codeString: dark ? "#a5d6a7" : "#25702a"
    readonly property color codeNumber: dark ? "#f2a86a" : "#a44d00"
    readonly property color codeComment: dark ? "#737d92" : "#5f6779"
    readonly property color codeType: dark ? "#72cfe0" : "#007a87"
    readonly property color codeFunction: dark ? "#82aaff" : "#2456c2"
    readonly property color danger: dark ? "#f0616d" : "#c4242f"
    readonly property color dangerSurface: dark ? "#3a1d24" : "#fde7e9"
    // States: ready / a drafter on / a speed-up; paused; off. Text-readable on both panels.
    readonly property color good: dark ? "#66bb6a" : "#2c7a30"
    readonly property color warning: dark ? "#fa9628" : "#b15f00"
    readonly property color inactive: dark ? "#464a56" : "#b3b9c6"
    readonly property string mono: "DejaVu Sans Mono"
    readonly property int radius: 8
    readonly property int fontSize: 14
}
