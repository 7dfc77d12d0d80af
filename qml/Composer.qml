import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The message box: Enter sends, Shift+Enter adds a line; Send becomes Stop while replying.
Rectangle {
    id: composer
    property bool busy: false
    property bool editing: false
    property string modelName
    property alias text: input.text
    signal send(string text)
    signal stop()
    signal cancelEdit()

    function focusInput() { input.forceActiveFocus() }
    function submit() {
        if (composer.busy || input.text.trim().length === 0) return
        const text = input.text
        input.text = ""
        composer.send(text)
    }

    implicitHeight: Math.min(200, input.implicitHeight + 24)
    radius: 12
    color: Theme.surface
    border.color: input.activeFocus ? Theme.accent : Theme.border

    RowLayout {
        anchors.fill: parent
        anchors.margins: 8
        spacing: 8
        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            TextArea {
                id: input
                objectName: "composerInput"
                wrapMode: TextEdit.Wrap
                color: Theme.text
                placeholderText: composer.editing ? qsTr("Edit your message…")
                                                  : qsTr("Message %1…").arg(composer.modelName || "the model")
                placeholderTextColor: Theme.textDim
                font.pixelSize: Theme.fontSize
                background: null
                Accessible.name: qsTr("Message")
                Keys.onPressed: (event) => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                            && !(event.modifiers & Qt.ShiftModifier)) {
                        composer.submit()
                        event.accepted = true
                    } else if (event.key === Qt.Key_Escape && composer.editing) {
                        composer.cancelEdit()
                        event.accepted = true
                    }
                }
            }
        }
        Button {
            Layout.alignment: Qt.AlignBottom
            objectName: "sendButton"
            text: composer.busy ? qsTr("Stop") : composer.editing ? qsTr("Save") : qsTr("Send")
            highlighted: !composer.busy && input.text.trim().length > 0
            enabled: composer.busy || input.text.trim().length > 0
            Accessible.name: composer.busy ? qsTr("Stop the reply") : qsTr("Send the message")
            onClicked: composer.busy ? composer.stop() : composer.submit()
        }
    }
}
