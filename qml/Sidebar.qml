import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Strata.Core

// Conversations: new, search (full text), open, rename, delete.
Rectangle {
    id: sidebar
    property ChatController chat
    color: Theme.sidebar

    function focusSearch() { search.forceActiveFocus() }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 12
        spacing: 10

        Label {
            text: "Strata"
            color: Theme.text
            font.pixelSize: 20
            font.bold: true
        }
        Button {
            Layout.fillWidth: true
            text: qsTr("New chat")
            highlighted: true
            Accessible.name: qsTr("New chat (Ctrl+N)")
            onClicked: sidebar.chat.newConversation()
        }
        TextField {
            id: search
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search conversations")
            color: Theme.text
            placeholderTextColor: Theme.textDim
            background: Rectangle { radius: Theme.radius; color: Theme.surface; border.color: search.activeFocus ? Theme.accent : Theme.border }
            Accessible.name: qsTr("Search conversations (Ctrl+F)")
            onTextChanged: sidebar.chat.conversations.filter = text
        }
        ListView {
            id: list
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 2
            model: sidebar.chat.conversations
            property int renaming: -1
            delegate: Rectangle {
                id: entry
                required property int index
                required property var conversationId
                required property string title
                width: ListView.view.width
                height: 36
                radius: Theme.radius
                readonly property bool current: conversationId === sidebar.chat.conversationId
                color: current ? Theme.surfaceHover : hover.hovered ? Theme.surface : "transparent"
                HoverHandler { id: hover }
                TapHandler { onTapped: sidebar.chat.openConversation(entry.conversationId) }
                Label {
                    visible: list.renaming !== entry.index
                    anchors.left: parent.left
                    anchors.right: actions.left
                    anchors.leftMargin: 10
                    anchors.verticalCenter: parent.verticalCenter
                    text: entry.title
                    elide: Text.ElideRight
                    color: Theme.text
                }
                TextField {
                    visible: list.renaming === entry.index
                    anchors.fill: parent
                    text: entry.title
                    onVisibleChanged: if (visible) { forceActiveFocus(); selectAll() }
                    onAccepted: { sidebar.chat.renameConversation(entry.conversationId, text); list.renaming = -1 }
                    Keys.onEscapePressed: list.renaming = -1
                }
                Row {
                    id: actions
                    anchors.right: parent.right
                    anchors.verticalCenter: parent.verticalCenter
                    visible: hover.hovered || entry.current
                    ToolButton {
                        text: "✎"
                        Accessible.name: qsTr("Rename the conversation")
                        onClicked: list.renaming = entry.index
                    }
                    ToolButton {
                        text: "✕"
                        Accessible.name: qsTr("Delete the conversation")
                        onClicked: sidebar.chat.deleteConversation(entry.conversationId)
                    }
                }
            }
            Label {
                visible: list.count === 0
                anchors.horizontalCenter: parent.horizontalCenter
                y: 16
                text: search.text.length ? qsTr("No matches") : qsTr("No conversations yet")
                color: Theme.textDim
            }
        }
    }
}
