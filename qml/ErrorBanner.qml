import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The one error message the app shows; it stays until dismissed.
Rectangle {
    id: banner
    property string text
    signal dismissed()

    visible: text.length > 0
    implicitHeight: visible ? row.implicitHeight + 16 : 0
    color: Theme.dangerSurface
    border.color: Theme.danger
    radius: Theme.radius

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.margins: 8
        Label {
            Layout.fillWidth: true
            text: banner.text
            color: Theme.text
            wrapMode: Text.Wrap
        }
        Button {
            text: qsTr("Dismiss")
            flat: true
            Accessible.name: qsTr("Dismiss the error message")
            onClicked: banner.dismissed()
        }
    }
}
