import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Strata.Core

ApplicationWindow {
    id: window
    required property AppController app
    width: 1360
    height: 820
    // Below 962 px the sidebar and the Inside panel do not both fit next to a chat column of
    // 360 px: opening the Inside panel then hides the sidebar (closing it brings it back), so
    // the chat column keeps at least 298 px at the minimum width.
    minimumWidth: 640
    readonly property bool roomForBothPanels:
        width >= sidebar.Layout.minimumWidth + 1 + 360 + 1 + inside.Layout.minimumWidth
    property bool insideOpen: true
    minimumHeight: 480
    visible: true
    title: qsTr("Strata")
    color: Theme.window

    palette.window: Theme.window
    palette.base: Theme.surface
    palette.text: Theme.text
    palette.windowText: Theme.text
    palette.buttonText: Theme.text
    palette.button: Theme.surface
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.brightText: Theme.accentText  // text on highlighted buttons
    palette.mid: Theme.border
    palette.light: Theme.surfaceHover
    palette.dark: Theme.accent       // the filled part of sliders and switches
    palette.midlight: Theme.surfaceHover  // their empty track
    palette.placeholderText: Theme.textDim
    palette.toolTipBase: Theme.surface
    palette.toolTipText: Theme.text

    // The theme setting, live: every Theme colour follows.
    Binding { target: Theme; property: "dark"; value: window.app.colorScheme.dark }

    readonly property bool modelReady: app.engine.state === EngineBridge.Ready

    Shortcut { sequence: "Ctrl+N"; onActivated: window.app.chat.newConversation() }
    Shortcut {
        sequence: "Ctrl+F"
        onActivated: {
            if (!sidebar.visible) window.insideOpen = false
            sidebar.focusSearch()
        }
    }
    Shortcut { sequence: "Esc"; enabled: window.app.chat.busy; onActivated: window.app.chat.stop() }
    Shortcut { sequence: "Ctrl+,"; onActivated: settingsDialog.open() }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            visible: !window.insideOpen || window.roomForBothPanels
            Layout.preferredWidth: 260
            Layout.minimumWidth: 260
            Layout.fillHeight: true
            chat: window.app.chat
            transfer: window.app.transfer
        }
        Rectangle { Layout.fillHeight: true; width: 1; color: Theme.border; visible: sidebar.visible }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            // Not its content's unwrapped width: the side panels keep their widths.
            Layout.preferredWidth: 1
            spacing: 0

            // Model status and the panel toggles.
            RowLayout {
                Layout.fillWidth: true
                Layout.preferredHeight: 44
                Layout.leftMargin: 16
                Layout.rightMargin: 12
                BusyIndicator {
                    visible: window.app.engine.state === EngineBridge.Loading
                    running: visible
                    Layout.preferredWidth: 24
                    Layout.preferredHeight: 24
                }
                Rectangle {
                    visible: window.app.engine.state !== EngineBridge.Loading
                    width: 8; height: 8; radius: 4
                    color: window.modelReady || window.app.demo ? Theme.good : Theme.danger
                }
                Label {
                    objectName: "modelStatus"
                    Layout.fillWidth: true
                    text: window.app.modelStatus
                    color: Theme.textDim
                    elide: Text.ElideRight
                }
                ToolButton {
                    text: window.insideOpen ? qsTr("Hide inside view") : qsTr("Inside the model")
                    Accessible.name: text
                    onClicked: window.insideOpen = !window.insideOpen
                }
                ToolButton {
                    text: qsTr("Settings")
                    Accessible.name: qsTr("Settings (Ctrl+,)")
                    onClicked: settingsDialog.open()
                }
            }
            ErrorBanner {
                Layout.fillWidth: true
                Layout.leftMargin: 16
                Layout.rightMargin: 16
                text: window.app.errorText
                onDismissed: window.app.dismissError()
            }
            Rectangle { Layout.fillWidth: true; height: 1; color: Theme.border }
            ChatView {
                id: chatView
                Layout.fillWidth: true
                Layout.fillHeight: true
                chat: window.app.chat
                modelName: window.app.engine.modelName || (window.app.demo ? "strata-tiny" : "")
                modelReady: window.modelReady || window.app.demo
                modelFailed: window.app.engine.state === EngineBridge.Failed
            }
        }
        Rectangle { Layout.fillHeight: true; width: 1; color: Theme.border; visible: inside.visible }
        InsidePanel {
            id: inside
            visible: window.insideOpen
            Layout.preferredWidth: 340
            Layout.minimumWidth: 340
            Layout.fillHeight: true
            monitor: window.app.monitor
            routing: window.app.routing
            speculation: window.app.speculation
            prefill: window.app.prefill
        }
    }

    SettingsDialog {
        id: settingsDialog
        app: window.app
    }

    Component.onCompleted: chatView.focusComposer()
}
