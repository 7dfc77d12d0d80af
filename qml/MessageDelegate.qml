import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Strata.Core

// One message. User messages are plain text in a bubble; assistant messages show their
// thinking (collapsible) above the Markdown answer, and actions below.
Item {
    id: root
    required property int index
    required property string role
    required property string content
    required property string thinking
    required property bool thinkingActive
    required property bool streaming
    required property var blocks
    required property string stats
    property ChatController chat
    property bool isLastAssistant: false
    property bool isLastUser: false
    property bool thinkingOpen: false
    signal editRequested(string text)

    readonly property bool isUser: role === "user"
    width: ListView.view ? ListView.view.width : 400
    height: body.implicitHeight + 20

    ColumnLayout {
        id: body
        x: 24
        y: 10
        width: root.width - 48
        spacing: 6

        // User: a right-aligned bubble.
        Rectangle {
            visible: root.isUser
            Layout.alignment: Qt.AlignRight
            Layout.preferredWidth: Math.min(userText.implicitWidth + 28, body.width * 0.75)
            Layout.preferredHeight: userText.implicitHeight + 20
            radius: 12
            color: Theme.userBubble
            Text {
                id: userText
                x: 14; y: 10
                width: Math.min(implicitWidth, body.width * 0.75 - 28)
                text: root.isUser ? root.content : ""
                textFormat: Text.PlainText
                wrapMode: Text.Wrap
                color: Theme.text
                font.pixelSize: Theme.fontSize
            }
        }

        // Assistant: thinking, then the answer.
        Rectangle {
            visible: !root.isUser && (root.thinking.length > 0 || root.thinkingActive)
            Layout.fillWidth: true
            Layout.preferredHeight: thinkingColumn.implicitHeight + 12
            radius: Theme.radius
            color: "transparent"
            border.color: Theme.border
            Column {
                id: thinkingColumn
                x: 10; y: 6
                width: parent.width - 20
                spacing: 4
                Label {
                    text: (root.thinkingOpen ? "▾ " : "▸ ") +
                          (root.thinkingActive ? qsTr("Thinking…") : qsTr("Thought"))
                    color: Theme.textDim
                    font.pixelSize: 12
                    MouseArea {
                        anchors.fill: parent
                        cursorShape: Qt.PointingHandCursor
                        onClicked: root.thinkingOpen = !root.thinkingOpen
                    }
                    Accessible.role: Accessible.Button
                    Accessible.name: root.thinkingOpen ? qsTr("Hide the thinking") : qsTr("Show the thinking")
                }
                Text {
                    visible: root.thinkingOpen
                    width: parent.width
                    text: root.thinkingOpen ? root.thinking : ""
                    textFormat: Text.PlainText
                    wrapMode: Text.Wrap
                    color: Theme.textDim
                    font.italic: true
                    font.pixelSize: 13
                }
            }
        }
        MarkdownView {
            visible: !root.isUser
            Layout.fillWidth: true
            blocks: root.isUser ? null : root.blocks
            chat: root.chat
        }
        BusyIndicator {
            visible: root.streaming && root.content.length === 0 && !root.thinkingActive
            running: visible
            Layout.preferredHeight: 28
            Layout.preferredWidth: 28
        }

        RowLayout {
            visible: !root.streaming
            Layout.alignment: root.isUser ? Qt.AlignRight : Qt.AlignLeft
            spacing: 2
            Label {
                visible: root.stats.length > 0
                text: root.stats
                color: Theme.textDim
                font.pixelSize: 11
                rightPadding: 8
            }
            TextButton {
                text: qsTr("Copy")
                Accessible.name: qsTr("Copy the message")
                onClicked: root.chat.copyMessage(root.index)
            }
            TextButton {
                visible: root.isLastAssistant
                enabled: !root.chat.busy
                text: qsTr("Regenerate")
                Accessible.name: qsTr("Regenerate the reply")
                onClicked: root.chat.regenerate()
            }
            TextButton {
                visible: root.isLastUser
                enabled: !root.chat.busy
                text: qsTr("Edit")
                Accessible.name: qsTr("Edit the message")
                onClicked: root.editRequested(root.content)
            }
        }
    }
}
