import QtQuick
import QtQuick.Controls
import Strata.Core

// Speculative decoding, one row per drafter the model has: state (on / paused by self-tuning /
// off), first-token acceptance and measured speed-up; and the last reply's tokens per pass.
Column {
    id: block
    property SpeculationMonitor monitor
    readonly property int valueWidth: 58

    function stateColor(state) {
        return state === "on" ? Theme.good : state === "paused" ? Theme.warning : Theme.inactive
    }

    spacing: 4
    // Title, then the column heads over the two value columns.
    Row {
        Label {
            width: block.width - 2 * block.valueWidth
            text: qsTr("Speculative decoding")
            color: Theme.textDim
            font.pixelSize: 12
            HoverHandler { id: headHover }
            ToolTip.visible: headHover.hovered
            ToolTip.text: qsTr("Drafters guess the next tokens; one forward pass checks them all, and the output is exactly what plain decoding would give. Accepted: rounds whose first guess was kept. Speed-up: measured against plain decoding on this machine.")
        }
        Repeater {
            model: [qsTr("accepted"), qsTr("speed-up")]
            delegate: Label {
                required property string modelData
                width: block.valueWidth
                anchors.bottom: parent.bottom
                horizontalAlignment: Text.AlignRight
                text: modelData
                color: Theme.textDim
                font.pixelSize: 10
            }
        }
    }
    // By count: the rows stay while the stats update (a list model would rebuild them all).
    Repeater {
        model: block.monitor ? block.monitor.drafters.length : 0
        delegate: Row {
            id: row
            required property int index
            readonly property var modelData: block.monitor.drafters[index] || ({})
            objectName: "drafter_" + modelData.name
            Rectangle {
                width: 8; height: 8; radius: 4
                anchors.verticalCenter: parent.verticalCenter
                color: block.stateColor(row.modelData.state)
            }
            Item { width: 6; height: 1 }
            Label {
                width: 86
                text: row.modelData.label
                color: row.modelData.state === "off" ? Theme.textDim : Theme.text
                font.pixelSize: 12
                elide: Text.ElideRight
            }
            Label {
                objectName: "drafterState_" + row.modelData.name
                width: block.width - 100 - 2 * block.valueWidth
                text: row.modelData.stateText
                elide: Text.ElideRight
                color: Theme.textDim
                font.pixelSize: 12
            }
            Label {
                objectName: "drafterAcceptance_" + row.modelData.name
                width: block.valueWidth
                horizontalAlignment: Text.AlignRight
                text: row.modelData.acceptanceText
                color: Theme.text
                font.pixelSize: 12
            }
            Label {
                objectName: "drafterSpeedup_" + row.modelData.name
                width: block.valueWidth
                horizontalAlignment: Text.AlignRight
                text: row.modelData.speedupText
                color: row.modelData.speedup >= 1 ? Theme.good : Theme.text
                font.pixelSize: 12
            }
        }
    }
    // The last reply: tokens per forward pass (1.00 without speculation) and drafts kept.
    Row {
        spacing: 6
        Label { text: qsTr("Last reply"); color: Theme.textDim; font.pixelSize: 11 }
        Label {
            objectName: "speculationTokensPerPass"
            text: block.monitor ? qsTr("%1 tokens/pass").arg(block.monitor.lastTokensPerPassText) : ""
            color: Theme.text
            font.pixelSize: 11
        }
        Label {
            objectName: "speculationDraftsKept"
            visible: block.monitor !== null && block.monitor.hasLastReply
            text: block.monitor ? qsTr("· %1 of %2 drafts kept").arg(block.monitor.lastAccepted).arg(block.monitor.lastDrafted) : ""
            color: Theme.textDim
            font.pixelSize: 11
        }
    }
}
