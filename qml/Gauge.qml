import QtQuick
import QtQuick.Controls

// A labelled bar: used / budget, with both numbers written out.
Column {
    id: gauge
    property string label
    property real used: 0
    property real budget: 0
    property color barColor: Theme.accent

    function size(bytes) {
        if (bytes >= 1073741824) return (bytes / 1073741824).toFixed(1) + " GiB"
        if (bytes >= 1048576) return (bytes / 1048576).toFixed(1) + " MiB"
        return Math.round(bytes / 1024) + " KiB"
    }

    spacing: 4
    Row {
        width: gauge.width
        Label { text: gauge.label; color: Theme.textDim; width: parent.width / 2 }
        Label {
            width: parent.width / 2
            horizontalAlignment: Text.AlignRight
            color: Theme.text
            text: gauge.budget > 0 ? gauge.size(gauge.used) + " / " + gauge.size(gauge.budget)
                                   : gauge.size(gauge.used)
        }
    }
    Rectangle {
        width: gauge.width
        height: 6
        radius: 3
        color: Theme.surface
        Rectangle {
            height: parent.height
            radius: 3
            color: gauge.barColor
            width: gauge.budget > 0 ? parent.width * Math.min(1, gauge.used / gauge.budget) : parent.width
        }
    }
}
