import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Strata.Core

// Conversations: new, import (JSON), search (full text), open, rename, export (Markdown or
// JSON), delete.
Rectangle {
    id: sidebar
    property ChatController chat
    property ConversationTransfer transfer
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
        RowLayout {
            Layout.fillWidth: true
            spacing: 6
            Button {
                Layout.fillWidth: true
                text: qsTr("New chat")
                highlighted: true
                Accessible.name: qsTr("New chat (Ctrl+N)")
                onClicked: sidebar.chat.newConversation()
            }
            Button {
                objectName: "importButton"
                text: qsTr("Import…")
                enabled: sidebar.transfer !== null
                Accessible.name: qsTr("Import a conversation from a JSON file")
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: qsTr("Import a conversation (Strata or OpenAI-style JSON)")
                onClicked: importDialog.open()
            }
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
                    anchors.right: actions.visible ? actions.left : parent.right
                    anchors.leftMargin: 10
                    anchors.rightMargin: actions.visible ? 0 : 10
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
                        objectName: "exportButton"
                        text: "⤓"
                        Accessible.name: qsTr("Export the conversation")
                        ToolTip.visible: hovered
                        ToolTip.delay: 600
                        ToolTip.text: qsTr("Export as Markdown or JSON")
                        onClicked: {
                            exportMenu.conversationId = entry.conversationId
                            exportMenu.popup()
                        }
                    }
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

    Menu {
        id: exportMenu
        property var conversationId: 0
        MenuItem {
            text: qsTr("Export as Markdown…")
            onTriggered: exportDialog.start(exportMenu.conversationId, "md")
        }
        MenuItem {
            text: qsTr("Export as JSON…")
            onTriggered: exportDialog.start(exportMenu.conversationId, "json")
        }
    }

    FileDialog {
        id: exportDialog
        objectName: "exportDialog"
        property var conversationId: 0
        property string suffix: "md"
        title: qsTr("Export the conversation")
        fileMode: FileDialog.SaveFile
        defaultSuffix: suffix
        nameFilters: suffix === "md" ? [qsTr("Markdown (*.md)")] : [qsTr("JSON (*.json)")]
        function start(id, kind) {
            conversationId = id
            suffix = kind
            const file = sidebar.transfer.suggestedFile(id, kind)
            currentFolder = file.toString().replace(/\/[^\/]*$/, "")
            selectedFile = file
            open()
        }
        onAccepted: suffix === "md" ? sidebar.transfer.exportMarkdown(conversationId, selectedFile)
                                    : sidebar.transfer.exportJson(conversationId, selectedFile)
    }

    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import a conversation")
        fileMode: FileDialog.OpenFile
        nameFilters: [qsTr("JSON (*.json)"), qsTr("All files (*)")]
        onAccepted: sidebar.transfer.importJson(selectedFile)
    }
}
