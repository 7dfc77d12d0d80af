import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Strata.Core

// The open conversation: its messages (a ListView: only visible delegates exist), the notice
// line ("Resumed … tokens in … ms") and the composer.
Rectangle {
    id: view
    property ChatController chat
    property string modelName
    property bool modelReady: false
    property bool modelFailed: false
    color: Theme.window

    function focusComposer() { composer.focusInput() }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        Item {
            Layout.fillWidth: true
            Layout.preferredHeight: 48
            Label {
                anchors.left: parent.left
                anchors.right: notice.left
                anchors.leftMargin: 24
                anchors.rightMargin: 12
                anchors.verticalCenter: parent.verticalCenter
                text: view.chat.title.length ? view.chat.title : qsTr("New chat")
                color: Theme.text
                font.pixelSize: 16
                font.bold: true
                elide: Text.ElideRight
            }
            Label {
                id: notice
                objectName: "noticeLabel"
                anchors.right: parent.right
                anchors.rightMargin: 24
                anchors.verticalCenter: parent.verticalCenter
                width: Math.min(implicitWidth, parent.width * 0.5)
                text: view.chat.notice
                color: Theme.accent
                font.pixelSize: 12
                elide: Text.ElideRight
            }
        }
        Rectangle { Layout.fillWidth: true; height: 1; color: Theme.border }

        ListView {
            id: list
            objectName: "messageList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: view.chat.messages
            spacing: 4
            topMargin: 12
            bottomMargin: 12
            reuseItems: false
            // Delegates are kept this far beyond the view (default 320 px). A message created
            // just above the view starts shorter than it is and grows once laid out, pushing the
            // ones below it down; with the end followed, a last message pushed out of a 320 px
            // buffer was destroyed and made again at the end, with the ones above it, every frame
            // while a reply waited for its first token (about 400 delegates a second at the end
            // of a 50,000-character conversation). With room for such a push nothing is remade.
            cacheBuffer: 1600
            // Stick to the bottom while the user is there. The view follows changes of the
            // content (a new message, the last message growing as a reply streams or moved as
            // the ones above it are laid out, the view resized), never changes of its contentHeight alone: with
            // delegates of varying height that is an estimate (the laid-out items plus the
            // average size of the others) which positioning itself changes, as it creates and
            // releases delegates. Re-positioning synchronously on every contentHeight change
            // re-estimated it again, without end, inside one frame's layout, once messages were
            // taller than the view (a column narrower than about 200 px): a new delegate starts
            // at its first line's height and grows when laid out, so each positioning released
            // and created others. Now the end is positioned at most once per event-loop turn
            // (once per frame while a reply streams), after the delegates' layout, and only
            // when the content changed, so the view settles.
            property bool follow: true
            property bool contentChanged: false  // since the last positioning
            function followEnd() {
                if (!contentChanged) return
                contentChanged = false
                if (!follow || count === 0) return
                // Scrolled to the last message's bottom as laid out, not to the estimated end:
                // the items in view keep their places, only the ones above are estimated.
                const last = itemAtIndex(count - 1)
                if (last === null) { positionViewAtEnd(); return }
                const end = last.y + last.height + bottomMargin - height
                if (Math.abs(contentY - end) > 0.5) contentY = Math.max(end, originY - topMargin)
            }
            function contentDidChange() {
                contentChanged = true
                Qt.callLater(followEnd)  // calls in one turn are merged into one
            }
            onCountChanged: { follow = true; contentDidChange() }
            onHeightChanged: contentDidChange()
            onWidthChanged: contentDidChange()
            onMovementStarted: follow = false
            onMovementEnded: follow = atYEnd
            ScrollBar.vertical: ScrollBar {}

            delegate: MessageDelegate {
                chat: view.chat
                isLastAssistant: role === "assistant" && index === list.count - 1
                isLastUser: index === view.chat.messages.lastUserRow
                // Only the last message is watched: it grows as a reply streams, and moves when
                // the messages above it are laid out. Others entering or leaving the cache
                // buffer as the view positions itself do not move it.
                readonly property bool isLast: index === list.count - 1
                onHeightChanged: if (isLast) list.contentDidChange()
                onYChanged: if (isLast) list.contentDidChange()
                onEditRequested: (text) => {
                    composer.editing = true
                    composer.text = text
                    composer.focusInput()
                }
            }

            Column {
                visible: list.count === 0
                anchors.centerIn: parent
                spacing: 12
                width: Math.min(parent.width - 48, 520)
                Label {
                    width: parent.width
                    horizontalAlignment: Text.AlignHCenter
                    text: view.modelReady ? qsTr("Ask %1 anything").arg(view.modelName)
                          : view.modelFailed ? qsTr("No model loaded: choose a model folder in Settings")
                                             : qsTr("Loading the model…")
                    color: Theme.text
                    font.pixelSize: 22
                }
                Label {
                    width: parent.width
                    horizontalAlignment: Text.AlignHCenter
                    wrapMode: Text.Wrap
                    text: qsTr("Enter sends, Shift+Enter adds a line. Everything runs on this computer.")
                    color: Theme.textDim
                }
                Flow {
                    width: parent.width
                    spacing: 8
                    Repeater {
                        model: [qsTr("What is the capital of France?"), qsTr("How many letters are in banana?"),
                                qsTr("Hello! Who are you?")]
                        delegate: Button {
                            required property string modelData
                            text: modelData
                            enabled: view.modelReady && !view.chat.busy
                            onClicked: view.chat.send(modelData)
                        }
                    }
                }
            }
        }

        Composer {
            id: composer
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            Layout.bottomMargin: 16
            busy: view.chat.busy
            modelName: view.modelName
            onSend: (text) => {
                if (editing) {
                    editing = false
                    view.chat.editLastUserMessage(text)
                } else {
                    view.chat.send(text)
                }
            }
            onStop: view.chat.stop()
            onCancelEdit: { editing = false; text = "" }
        }
    }
}
