import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Strata.Core

// Inside the model: the expert heatmap (layers x experts; colour = heat, stripe = tier), tier
// gauges, cache hit rate, decode speed, time to first token (with the prompt's progress while it
// is read) and speculative decoding.
Rectangle {
    id: panel
    property TierMonitor monitor
    property SpeculationMonitor speculation
    property PrefillMonitor prefill
    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 14
        spacing: 12

        Label { text: qsTr("Inside the model"); color: Theme.text; font.pixelSize: 16; font.bold: true }

        Row {
            spacing: 18
            Column {
                Label { text: panel.monitor.tokensPerSecond.toFixed(1); color: Theme.text; font.pixelSize: 26 }
                Label { text: qsTr("tokens/s"); color: Theme.textDim; font.pixelSize: 11 }
            }
            // The last reply's: from the request to its first token, the prompt's reading included.
            Column {
                visible: panel.prefill !== null && panel.prefill.hasTimeToFirstToken
                Label {
                    objectName: "timeToFirstToken"
                    text: panel.prefill ? panel.prefill.timeToFirstTokenText : ""
                    color: Theme.text
                    font.pixelSize: 26
                }
                Label { text: qsTr("to first token"); color: Theme.textDim; font.pixelSize: 11 }
            }
            Column {
                visible: panel.monitor.streaming
                Label { text: (panel.monitor.hitRate * 100).toFixed(1) + " %"; color: Theme.text; font.pixelSize: 26 }
                Label { text: qsTr("cache hit rate"); color: Theme.textDim; font.pixelSize: 11 }
            }
        }
        // While the prompt is read: its progress, in the place of the speed history below.
        Column {
            objectName: "prefillProgress"
            visible: panel.prefill !== null && panel.prefill.reading
            Layout.fillWidth: true
            Layout.preferredHeight: 32  // the speed history's height: nothing below moves
            spacing: 6
            Label {
                objectName: "prefillText"
                text: panel.prefill ? panel.prefill.progressText : ""
                color: Theme.text
                font.pixelSize: 12
            }
            Rectangle {
                width: parent.width
                height: 4
                radius: 2
                color: Theme.surface
                Rectangle {
                    width: parent.width * (panel.prefill ? panel.prefill.fraction : 0)
                    height: parent.height
                    radius: 2
                    color: Theme.accent
                }
            }
        }
        // Decode speed, one bar per reply sample.
        Row {
            id: spark
            visible: !(panel.prefill !== null && panel.prefill.reading)
            Layout.fillWidth: true
            height: 32
            spacing: 1
            readonly property var samples: panel.monitor.speedHistory
            readonly property real peak: Math.max.apply(null, samples.concat([1]))
            Repeater {
                model: spark.samples.length
                delegate: Rectangle {
                    required property int index
                    width: Math.max(2, (spark.width - 60) / 60)
                    height: Math.max(2, spark.height * spark.samples[index] / spark.peak)
                    anchors.bottom: parent.bottom
                    color: Theme.accent
                    opacity: 0.8
                }
            }
        }

        SpeculationBlock {
            objectName: "speculationBlock"
            Layout.fillWidth: true
            monitor: panel.speculation
            visible: panel.speculation !== null && panel.speculation.drafters.length > 0
        }

        Label {
            text: panel.monitor.hasHeat
                  ? qsTr("Experts: %1 layers × %2").arg(heatmap.layers).arg(heatmap.experts)
                  : qsTr("Experts")
            color: Theme.textDim
            font.pixelSize: 12
        }
        Rectangle {
            Layout.fillWidth: true
            Layout.fillHeight: true
            Layout.minimumHeight: 120
            color: Theme.window
            border.color: Theme.border
            radius: 4
            HeatmapItem {
                id: heatmap
                objectName: "heatmap"
                anchors.fill: parent
                anchors.margins: 1
                monitor: panel.monitor
                visible: panel.monitor.hasHeat
                HoverHandler { id: heatHover }
                ToolTip.visible: heatHover.hovered && tip.length > 0
                ToolTip.text: tip
                property string tip: {
                    const c = heatHover.hovered ? cellAt(heatHover.point.position.x, heatHover.point.position.y) : {}
                    if (c.layer === undefined) return ""
                    return qsTr("layer %1 · expert %2 · heat %3%4").arg(c.layer).arg(c.expert)
                        .arg(c.heat.toFixed(2)).arg(c.tier ? " · " + c.tier : "")
                }
            }
            Label {
                visible: !panel.monitor.hasHeat
                anchors.fill: parent
                anchors.margins: 16
                wrapMode: Text.Wrap
                horizontalAlignment: Text.AlignHCenter
                verticalAlignment: Text.AlignVCenter
                color: Theme.textDim
                text: qsTr("All experts resident: this model is loaded whole (no memory budget), so no expert streams from disk. Set a memory budget for a converted model in Settings to watch experts move between tiers.")
            }
        }
        // Legend: heat ramp, then the tier stripe colours.
        Flow {
            visible: panel.monitor.hasHeat
            Layout.fillWidth: true
            spacing: 10
            Row {
                spacing: 4
                Label { text: qsTr("cold"); color: Theme.textDim; font.pixelSize: 11 }
                Rectangle {
                    width: 60; height: 10; anchors.verticalCenter: parent.verticalCenter
                    gradient: Gradient {
                        orientation: Gradient.Horizontal
                        GradientStop { position: 0.0; color: "#1e212d" }
                        GradientStop { position: 0.3; color: "#58288c" }
                        GradientStop { position: 0.6; color: "#cd414b" }
                        GradientStop { position: 0.85; color: "#fa9628" }
                        GradientStop { position: 1.0; color: "#fcf096" }
                    }
                }
                Label { text: qsTr("hot"); color: Theme.textDim; font.pixelSize: 11 }
            }
            Repeater {
                model: [["#b388ff", qsTr("pinned")], ["#66bb6a", qsTr("RAM")], ["#4dd0e1", qsTr("loading")], ["#464a56", qsTr("disk")]]
                delegate: Row {
                    required property var modelData
                    spacing: 3
                    Rectangle { width: 10; height: 4; color: modelData[0]; anchors.verticalCenter: parent.verticalCenter }
                    Label { text: modelData[1]; color: Theme.textDim; font.pixelSize: 11 }
                }
            }
        }

        Gauge {
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            label: qsTr("Pinned RAM")
            used: panel.monitor.pinnedBytes
            budget: panel.monitor.pinnedBudget
            barColor: "#b388ff"
        }
        Gauge {
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            label: qsTr("RAM cache")
            used: panel.monitor.cacheBytes
            budget: panel.monitor.cacheBudget
            barColor: "#66bb6a"
        }
        // Not streaming: the header shows the resident size (the snapshot counts experts twice there).
        Gauge {
            Layout.fillWidth: true
            visible: panel.monitor.streaming
            label: qsTr("Resident weights")
            used: panel.monitor.residentBytes
            barColor: Theme.textDim
        }
    }
}
