import QtQuick
import QtQuick.Controls

// A quiet text action under a message (Copy, Regenerate, Edit).
Label {
    id: button
    signal clicked()
    padding: 4
    font.pixelSize: 12
    color: !enabled ? Theme.border : mouse.containsMouse ? Theme.accent : Theme.textDim
    Accessible.role: Accessible.Button
    Accessible.name: text
    Accessible.onPressAction: if (enabled) clicked()
    MouseArea {
        id: mouse
        anchors.fill: parent
        hoverEnabled: true
        cursorShape: button.enabled ? Qt.PointingHandCursor : Qt.ArrowCursor
        onClicked: if (button.enabled) button.clicked()
    }
}
